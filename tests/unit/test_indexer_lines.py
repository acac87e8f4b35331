"""NDJSON lines with the byte position after each, whatever the block boundaries;
tailing across rotation and truncation."""

import io
import itertools
import threading
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from session_recall.indexer.chunking import FLUSH
from session_recall.indexer.lines import Line, _Splitter, follow_file, read_stream
from session_recall.node import wait_until

_lines = st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=30)


def _split(lines, final_newline, cuts, splitter):
    """The text of `lines` fed to `splitter` in blocks cut as `cuts` says (repeated), and
    the lines a newline ends, as `str.split` sees them."""
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    out, position = [], 0
    for cut in cuts * (len(data) // sum(cuts) + 1):
        out += splitter.feed(data[position : position + cut])
        position += cut
    out += splitter.finish()
    expected = data.split(b"\n")
    if expected[-1] == b"":
        expected.pop()  # a final newline ends the last line; it does not start one
    return data, out, expected


@given(_lines, st.booleans(), st.lists(st.integers(1, 40), min_size=1, max_size=10))
def test_lines_and_positions_do_not_depend_on_block_boundaries(lines, final_newline, cuts):
    splitter = _Splitter(start=100, inode=None, max_line_bytes=1000)
    data, out, expected = _split(lines, final_newline, cuts, splitter)
    assert [line.data for line in out] == expected
    assert [line.number for line in out] == list(range(1, len(expected) + 1))
    ends = [
        100 + min(len(data), sum(len(x) + 1 for x in expected[: i + 1]))
        for i in range(len(expected))
    ]
    assert [line.end for line in out] == ends


@given(
    _lines,
    st.booleans(),
    st.lists(st.integers(1, 40), min_size=1, max_size=10),
    st.integers(0, 14),
)
def test_overlong_lines_are_flagged_whatever_the_block_boundaries(
    lines, final_newline, cuts, max_line_bytes
):
    splitter = _Splitter(start=0, inode=7, max_line_bytes=max_line_bytes)
    data, out, expected = _split(lines, final_newline, cuts, splitter)
    assert [(line.data, line.too_long) for line in out] == [
        (b"", True) if len(x) > max_line_bytes else (x, False) for x in expected
    ]
    assert [line.number for line in out] == list(range(1, len(expected) + 1))
    assert {line.inode for line in out} <= {7}
    assert (out[-1].end if out else 0) == len(data)


def test_an_overlong_line_is_skipped_but_still_counted():
    data = b"short\n" + b"x" * 50 + b"\nafter\n"
    out = [x for x in read_stream(io.BytesIO(data), max_line_bytes=10) if isinstance(x, Line)]
    assert [(line.data, line.too_long) for line in out] == [
        (b"short", False),
        (b"", True),
        (b"after", False),
    ]
    assert out[-1].end == len(data)


def _collect(path: Path, stop: threading.Event, sink: list, quiet: float = 0.0) -> None:
    for item in follow_file(path, start=0, stop=stop, poll_interval=0.01, rotation_quiet=quiet):
        sink.append(item)


def _data(sink: list) -> list[bytes]:
    return [item.data for item in sink if isinstance(item, Line)]


def test_follow_reads_across_rotation_and_truncation(tmp_path: Path):
    path, rotated = tmp_path / "events.ndjson", tmp_path / "events.ndjson.1"
    path.write_bytes(b"a1\na2\n")
    stop, sink = threading.Event(), []
    reader = threading.Thread(target=_collect, args=(path, stop, sink))
    reader.start()
    try:
        assert wait_until(lambda: _data(sink) == [b"a1", b"a2"], timeout=10)
        assert sink[-1] is FLUSH, "reaching the end of the file flushes"

        path.rename(rotated)
        with rotated.open("ab") as old:  # the producer still holds the old file
            old.write(b"a3\na4-last")
        assert wait_until(lambda: _data(sink)[-1:] == [b"a3"], timeout=10)
        path.write_bytes(b"b1\n")  # the new file appears: the old one is drained first
        assert wait_until(lambda: _data(sink)[-1:] == [b"b1"], timeout=10)
        assert _data(sink) == [b"a1", b"a2", b"a3", b"a4-last", b"b1"]

        # Truncated below the read position (3), so it is noticed whenever it is looked at.
        path.write_bytes(b"c\n")
        assert wait_until(lambda: _data(sink)[-1:] == [b"c"], timeout=10)
        with path.open("ab") as new:
            new.write(b"d1\nd2")
        assert wait_until(lambda: _data(sink)[-1:] == [b"d1"], timeout=10)
        with path.open("ab") as new:
            new.write(b"\n")  # an unfinished line waits for its newline
        assert wait_until(lambda: _data(sink)[-1:] == [b"d2"], timeout=10)
        last = [item for item in sink if isinstance(item, Line)][-1]
        assert last.end == 8  # positions restart in the truncated file
    finally:
        stop.set()
        reader.join(timeout=10)
    assert not reader.is_alive()


def _lines(sink: list) -> list[Line]:
    return [item for item in sink if isinstance(item, Line)]


def test_after_a_create_rotation_the_renamed_file_is_followed_while_its_writer_appends(
    tmp_path: Path,
):
    # logrotate's `create`: renamed, a new file at once, the writer still on the old one.
    path, rotated = tmp_path / "events.ndjson", tmp_path / "events.ndjson.1"
    path.write_bytes(b"a1\n")
    stop, sink = threading.Event(), []
    reader = threading.Thread(target=_collect, args=(path, stop, sink, 60.0))
    reader.start()
    try:
        assert wait_until(lambda: _data(sink) == [b"a1"], timeout=10)
        path.rename(rotated)
        path.write_bytes(b"b1\n")
        for line in (b"a2", b"a3"):  # the second long after the rotation could be seen
            with rotated.open("ab") as old:
                old.write(line + b"\n")
            assert wait_until(lambda line=line: _data(sink)[-1:] == [line], timeout=10), (
                f"{line!r}, appended to the renamed file, was never read"
            )
        assert b"b1" not in _data(sink), "the new file was read before the old one went quiet"
    finally:
        stop.set()
        reader.join(timeout=10)
    assert not reader.is_alive()


def test_the_new_file_is_read_once_the_renamed_one_has_been_quiet(tmp_path: Path):
    path, rotated = tmp_path / "events.ndjson", tmp_path / "events.ndjson.1"
    path.write_bytes(b"a1\n")
    stop, sink = threading.Event(), []
    reader = threading.Thread(target=_collect, args=(path, stop, sink, 0.2))
    reader.start()
    try:
        assert wait_until(lambda: _data(sink) == [b"a1"], timeout=10)
        path.rename(rotated)
        path.write_bytes(b"b1\n")
        with rotated.open("ab") as old:
            old.write(b"a2\na3-unfinished")
        assert wait_until(lambda: _data(sink)[-1:] == [b"b1"], timeout=10)
    finally:
        stop.set()
        reader.join(timeout=10)
    assert _data(sink) == [b"a1", b"a2", b"a3-unfinished", b"b1"]
    inodes = [line.inode for line in _lines(sink)]
    assert inodes[:3] == [rotated.stat().st_ino] * 3
    assert inodes[3] == path.stat().st_ino


def test_what_the_renamed_file_gained_while_the_consumer_worked_is_read_before_leaving_it(
    tmp_path: Path,
):
    # The follower is a generator: while its consumer works on a FLUSH (a bulk request,
    # which can outlast the quiet period), it does not look at the file. What the
    # writer appended meanwhile is read before the renamed file counts as quiet; with
    # no quiet period at all, leaving it then would otherwise lose those lines.
    path, rotated = tmp_path / "events.ndjson", tmp_path / "events.ndjson.1"
    rotated.write_bytes(b"a1\n")  # renamed while a run was down; its writer still on it
    path.write_bytes(b"b1\n")
    stop = threading.Event()
    items = follow_file(
        path, start=0, stop=stop, poll_interval=0.01, rotation_quiet=0.0, rotated=rotated
    )
    guard = threading.Timer(10, stop.set)  # ends the follow, should the test go wrong
    guard.start()
    try:
        assert _data([next(items)]) == [b"a1"]
        assert next(items) is FLUSH
        with rotated.open("ab") as old:  # while the consumer works on that FLUSH
            old.write(b"a2\n")
        seen = list(itertools.takewhile(lambda item: _data([item]) != [b"b1"], items))
        assert _data(seen) == [b"a2"], "the renamed file was left with lines unread"
    finally:
        guard.cancel()
        items.close()
