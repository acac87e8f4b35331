"""NDJSON input as lines with byte positions: from a stream, or tailing a file.

Each line carries the position where the next one starts, which is what a checkpoint
stores. Tailing survives rotation and truncation (the file shrank below the read
position). After a rotation (the path now names another inode) the renamed file is
read on until it has been quiet for a while: with logrotate's `create`, the new file
appears at once while the writer still appends to the renamed one until it reopens.
A run that stopped before a rotated file's tail was acknowledged finishes that file
first when it starts again (`checkpoint.rotated_file`, then `read_finished_file`, or
`follow_file(rotated=...)`, which waits for it to be quiet the same way).
"""

import os
import select
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from session_recall.indexer.chunking import FLUSH, Flush

BLOCK_BYTES = 1024 * 1024
# Text is capped at 1 MB by default; a line ten times that is not an event, and
# buffering it whole would let one bad file exhaust memory.
DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024
# What a line over the limit keeps: its start, where a producer writes the event's ids
# (`long_lines`), for the dead-letter file to say whose line was skipped.
HEAD_BYTES = 64 * 1024
# How long a renamed file must stay quiet before it is left for the new one. A writer
# told to reopen (logrotate's postrotate signal) does so within a second or so; the
# cost of waiting longer is only that the new file's first events wait as long.
DEFAULT_ROTATION_QUIET_S = 5.0


# Not frozen, like the other records made once per event: a frozen dataclass's
# `__init__` sets each field through `object.__setattr__`, which triples its cost.
@dataclass(slots=True)
class Line:
    data: bytes
    number: int
    end: int  # offset just past this line's newline
    inode: int | None = None
    too_long: bool = False
    # Of a line too long: its first `HEAD_BYTES`, and the offset where it starts.
    head: bytes = b""
    start: int = 0


@dataclass(slots=True)
class LineRun:
    """Whole lines of one block, as they were read: `data[start:end]`, each line ending
    with a newline. `position` is the input offset of `data[start]`, `number` the
    number of the line before the first. For a reader that takes many lines at once
    (`native`) rather than a `Line` each; `lines()` gives the same as `Line`s."""

    data: bytes
    start: int
    end: int
    position: int
    number: int
    inode: int | None = None
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    def lines(self) -> Iterator[Line]:
        position, number, limit, inode = self.position, self.number, self.max_line_bytes, self.inode
        pieces = self.data[self.start : self.end].split(b"\n")
        pieces.pop()  # after the last newline: nothing
        for piece in pieces:
            start = position
            position += len(piece) + 1
            number += 1
            if len(piece) > limit:
                yield Line(b"", number, position, inode, True, piece[:HEAD_BYTES], start)
            else:
                yield Line(piece, number, position, inode)


class _Splitter:
    def __init__(
        self, *, start: int, inode: int | None, max_line_bytes: int, runs: bool = False
    ) -> None:
        self._runs = runs
        self._position = start
        self._inode = inode
        self._max = max_line_bytes
        self._buffer = bytearray()
        self._pending = 0  # bytes of the current, unfinished line (buffered or skipped)
        self._skipping = False
        self._head = b""  # the start of the line being skipped
        self._number = 0

    def feed(self, block: bytes) -> Iterator[Line | LineRun]:
        first = block.find(b"\n")
        if first >= 0:
            # The first line may end one that earlier blocks began.
            length = self._pending + first + 1
            piece = block[:first]
            if self._buffer:
                self._buffer += piece
                piece = bytes(self._buffer)
                self._buffer.clear()
            yield self._emit(piece, length)
            last = block.rfind(b"\n") + 1
            if last > first + 1:
                # The others lie whole in this block: made here, not by a call per line.
                run = LineRun(
                    block, first + 1, last, self._position, self._number, self._inode, self._max
                )
                self._position += last - first - 1
                self._number += block.count(b"\n", first + 1, last)
                if self._runs:
                    yield run
                else:
                    yield from run.lines()
        rest = block[block.rfind(b"\n") + 1 :]  # the start of a line to come
        self._pending += len(rest)
        if not self._skipping:
            self._buffer += rest
            if len(self._buffer) > self._max:
                self._skipping = True
                self._head = bytes(self._buffer[:HEAD_BYTES])
                self._buffer.clear()

    def finish(self) -> Iterator[Line]:
        """The last line when it has no newline (only at the end of a finished file)."""
        if self._pending:
            piece = bytes(self._buffer)
            self._buffer.clear()
            yield self._emit(piece, self._pending)

    def _emit(self, piece: bytes, length: int) -> Line:
        too_long = self._skipping or len(piece) > self._max
        start = self._position
        self._position += length
        self._number += 1
        self._pending = 0
        if not too_long:
            return Line(piece, self._number, self._position, self._inode)
        head = self._head if self._skipping else piece[:HEAD_BYTES]
        self._skipping, self._head = False, b""
        return Line(b"", self._number, self._position, self._inode, True, head, start)


def read_stream(
    stream: BinaryIO,
    *,
    start: int = 0,
    inode: int | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    runs: bool = False,
) -> Iterator[Line | LineRun | Flush]:
    """Every line of `stream` from its current position (which is `start`); with
    `runs`, the lines that lie whole in a block read come as one `LineRun`.

    On a pipe that has nothing more to give for now, a `FLUSH` follows the lines read,
    so a slow producer's events are not held back waiting for a full chunk.
    """
    splitter = _Splitter(start=start, inode=inode, max_line_bytes=max_line_bytes, runs=runs)
    read = getattr(stream, "read1", stream.read)
    while block := read(BLOCK_BYTES):
        yield from splitter.feed(block)
        if not _readable_now(stream):
            yield FLUSH
    yield from splitter.finish()


def read_finished_file(
    path: Path,
    *,
    start: int,
    inode: int | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    runs: bool = False,
) -> Iterator[Line | LineRun | Flush]:
    """Every line of a file nobody appends to any more (a rotated one), from `start`,
    its last line taken even without a newline; then a `FLUSH`."""
    with path.open("rb") as file:
        file.seek(start)
        yield from read_stream(
            file, start=start, inode=inode, max_line_bytes=max_line_bytes, runs=runs
        )
    yield FLUSH


def follow_file(
    path: Path,
    *,
    start: int,
    stop: threading.Event,
    poll_interval: float = 0.2,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    rotation_quiet: float = DEFAULT_ROTATION_QUIET_S,
    rotated: Path | None = None,
    runs: bool = False,
) -> Iterator[Line | LineRun | Flush]:
    """Tail `path` from `start` until `stop` is set, across rotations and truncations.

    A `FLUSH` marks each time the end of the file is reached. The unfinished last line
    is left for later (its producer may be writing it). Once `path` names a new file,
    the old one is read on until nothing was added to it for `rotation_quiet` seconds,
    counted from the rotation being seen and from its last growth; then its last line
    is taken as it is, and the new file is followed. `rotated` (a file `path` was
    renamed from, found by a restarted run) is finished that way first, from `start`.
    """
    current = path if rotated is None else rotated
    file = current.open("rb")
    try:
        inode = os.fstat(file.fileno()).st_ino
        file.seek(start)
        splitter = _Splitter(start=start, inode=inode, max_line_bytes=max_line_bytes, runs=runs)
        at_rest = True
        # Since when the old file is known to be renamed away, and since when quiet.
        rotated_since = time.monotonic() if rotated is not None else None
        quiet_since = time.monotonic()
        while not stop.is_set():
            if block := file.read1(BLOCK_BYTES):
                yield from splitter.feed(block)
                at_rest = False
                quiet_since = time.monotonic()
                continue
            if not at_rest:
                yield FLUSH
                at_rest = True
                # Read again before judging anything: while the consumer worked on the
                # FLUSH (a bulk request can outlast `rotation_quiet`), the file was not
                # looked at, and a renamed file that grew meanwhile would count as
                # quiet and be left with those lines unread. Quiet is only ever decided
                # right after a read that found nothing.
                continue
            if rotated_since is None:
                change = _change(path, inode, file.tell())
                if change == "rotated":
                    rotated_since = time.monotonic()
                elif change == "truncated":
                    file.seek(0)
                    splitter = _Splitter(
                        start=0, inode=inode, max_line_bytes=max_line_bytes, runs=runs
                    )
                    continue
            if (
                rotated_since is not None
                and time.monotonic() - max(rotated_since, quiet_since) >= rotation_quiet
            ):
                try:
                    new = path.open("rb")
                except FileNotFoundError:
                    stop.wait(poll_interval)  # renamed away again: wait for the new one
                    continue
                yield from splitter.finish()
                yield FLUSH
                file.close()
                file = new
                inode = os.fstat(file.fileno()).st_ino
                splitter = _Splitter(start=0, inode=inode, max_line_bytes=max_line_bytes, runs=runs)
                rotated_since = None
                continue
            stop.wait(poll_interval)
    finally:
        file.close()


def _change(path: Path, inode: int, position: int) -> str | None:
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return None  # renamed away, the new file is not there yet: keep the old one
    if current.st_ino != inode:
        return "rotated"
    if current.st_size < position:
        return "truncated"
    return None


def _readable_now(stream: BinaryIO) -> bool:
    try:
        ready, _, _ = select.select([stream], [], [], 0)
    except (OSError, ValueError, TypeError):
        return True  # not a selectable stream (an in-memory buffer, say)
    return bool(ready)
