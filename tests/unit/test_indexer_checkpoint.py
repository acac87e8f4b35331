"""Checkpoints: atomic saves and a safe place to resume from."""

import os

import pytest

from session_recall.indexer import IndexerError, Position
from session_recall.indexer.checkpoint import load, resume_offset, rotated_file, save


def test_a_saved_position_loads_back_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "ckpt"
    save(path, Position(offset=42, inode=7))
    save(path, Position(offset=84, inode=7))
    assert load(path) == Position(offset=84, inode=7)
    assert os.listdir(tmp_path) == ["ckpt"]


def test_a_missing_checkpoint_means_from_the_start(tmp_path):
    assert load(tmp_path / "none") is None


def test_a_corrupt_checkpoint_says_how_to_recover(tmp_path):
    path = tmp_path / "ckpt"
    path.write_text("{half")
    with pytest.raises(IndexerError, match="Delete it to start from the beginning"):
        load(path)


@pytest.mark.parametrize(
    ("saved", "inode", "size", "expected"),
    [
        (None, 1, 100, 0),
        (Position(offset=40, inode=1), 1, 100, 40),
        (Position(offset=40, inode=1), 2, 100, 0),  # another file at the same path
        (Position(offset=140, inode=1), 1, 100, 0),  # truncated below the checkpoint
        (Position(offset=100, inode=1), 1, 100, 100),  # everything was done
        (Position(offset=40), 1, 100, 40),
    ],
)
def test_resume_offset(saved, inode, size, expected):
    assert resume_offset(saved, inode=inode, size=size) == expected


def _rotated_setup(tmp_path):
    path = tmp_path / "events.ndjson"
    path.write_bytes(b"a\nb\n")
    saved = Position(offset=2, inode=os.stat(path).st_ino)
    return path, saved


def test_a_rotated_file_is_found_by_its_inode_under_a_name_extending_the_path(tmp_path):
    path, saved = _rotated_setup(tmp_path)
    assert rotated_file(path, saved) is None, "still the same file"
    path.rename(tmp_path / "events.ndjson-20261130")
    (tmp_path / "other.ndjson").write_bytes(b"x\n")
    path.write_bytes(b"new\n")
    assert rotated_file(path, saved) == tmp_path / "events.ndjson-20261130"
    assert rotated_file(path, None) is None
    assert rotated_file(path, Position(offset=2)) is None


@pytest.mark.parametrize(
    "case", ["gone", "shorter than the offset", "excluded", "renamed elsewhere", "path missing"]
)
def test_a_rotated_file_that_cannot_be_the_checkpointed_one_is_not_used(tmp_path, case):
    path, saved = _rotated_setup(tmp_path)
    rotated = tmp_path / "events.ndjson.1"
    path.rename(rotated)
    if case != "path missing":
        path.write_bytes(b"new\n")
    exclude = []
    if case == "gone":
        rotated.unlink()
    elif case == "shorter than the offset":
        rotated.write_bytes(b"a")  # same inode, truncated: not the same content
    elif case == "excluded":
        exclude = [rotated]
    elif case == "renamed elsewhere":
        rotated.rename(tmp_path / "archive.ndjson")
    expected = rotated if case == "path missing" else None
    assert rotated_file(path, saved, exclude=exclude) == expected
