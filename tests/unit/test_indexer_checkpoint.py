"""Checkpoints: atomic saves and a safe place to resume from."""

import os

import pytest

from indexer import IndexerError, Position
from indexer.checkpoint import load, resume_offset, save


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
