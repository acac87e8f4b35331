"""`ingest --follow` under logrotate's `create` rotation, while a writer appends: the
file is renamed, a new one is created at once, and the writer keeps appending to the
renamed file until it is told to reopen. Nothing is lost, with or without a SIGKILL
of the follower in the middle, and the checkpoint ends on the new file."""

import itertools
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import BinaryIO

import pytest
from elasticsearch import Elasticsearch

from session_recall.indexer.checkpoint import Position, load
from session_recall.node import wait_until
from tests.support.cli import CLI
from tests.support.ndjson import duplicated_event_ids, event, ndjson, stored

pytestmark = pytest.mark.integration

# The writer's pace: a batch of lines, then a short pause (a producer's rate, not a wait).
BATCH, PAUSE_S = 10, 0.005
# Bounds the writer's loop; far more lines than a test needs.
MAX_LINES = 200_000
# Events the writer still appends to the renamed file, past what a follower had read.
LATE = 500


class _Logger(threading.Thread):
    """Appends events to its open file; reopens the path only when told to."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._path = path
        self._file: BinaryIO = path.open("ab")
        self._ids = itertools.count()
        self.written = 0
        self.reopen, self.stop = threading.Event(), threading.Event()

    def run(self) -> None:
        while not self.stop.is_set() and self.written < MAX_LINES:
            lines = [event(next(self._ids), user=f"u{self.written % 7}") for _ in range(BATCH)]
            if self.reopen.is_set():
                self.reopen.clear()
                self._file.close()
                self._file = self._path.open("ab")
            self._file.write(ndjson(lines))
            self._file.flush()
            self.written += BATCH
            self.stop.wait(PAUSE_S)
        self._file.close()


def _follow(es_url: str, alias: str, source: Path, ckpt: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*CLI, "--es-url", es_url, "--index", alias, "ingest", str(source), "--follow",
         "--checkpoint", str(ckpt), "--dead-letter", str(source.parent / "dead.ndjson")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        env={**os.environ, "SESSION_RECALL_ROTATION_QUIET": "1"},
    )  # fmt: skip


def _saved(path: Path) -> Position | None:
    try:
        return load(path)
    except Exception:  # a reader may race the rename; the next poll sees the file
        return None


def _rotate(source: Path) -> int:
    """logrotate `create`: rename, then a new empty file at once. Returns the number
    of complete lines the renamed file held at that moment."""
    rotated = source.with_name(source.name + ".1")
    source.rename(rotated)
    source.touch()
    return rotated.read_bytes().count(b"\n")


@pytest.mark.parametrize("kill", [False, True], ids=["live", "sigkill-after-rotation"])
def test_follow_keeps_every_line_of_a_create_rotation_while_the_writer_appends(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path, kill: bool
):
    source, ckpt = tmp_path / "events.ndjson", tmp_path / "events.ckpt"
    source.touch()
    logger = _Logger(source)
    logger.start()
    follower = _follow(es_url, alias, source, ckpt)
    try:
        assert wait_until(lambda: stored(es, alias) >= 200, timeout=60)
        at_rotation = _rotate(source)
        if kill:
            follower.send_signal(signal.SIGKILL)
            follower.communicate(timeout=60)
            follower = _follow(es_url, alias, source, ckpt)
        # The writer goes on in the renamed file: those lines must be stored.
        assert wait_until(lambda: stored(es, alias) >= at_rotation + LATE, timeout=60), (
            "lines appended to the renamed file after the rotation were not stored"
        )
        logger.reopen.set()
        assert wait_until(lambda: source.stat().st_size > 0, timeout=30)
        logger.stop.set()
        logger.join(timeout=30)
        assert wait_until(lambda: stored(es, alias) == logger.written, timeout=120)
        final = Position(offset=source.stat().st_size, inode=source.stat().st_ino)
        assert wait_until(lambda: _saved(ckpt) == final, timeout=60)
    finally:
        logger.stop.set()
        logger.join(timeout=30)
        follower.send_signal(signal.SIGTERM)
        output = follower.communicate(timeout=60)[0].decode()
    assert follower.returncode == 0, output
    assert duplicated_event_ids(es, alias) == []
    assert not (tmp_path / "dead.ndjson").exists()
