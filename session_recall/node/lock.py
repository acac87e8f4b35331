"""One process at a time: an exclusive lock on a file (`flock`), released when the
holder leaves its block or dies, so a crash never leaves a stale lock behind."""

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def held(path: Path, *, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the lock of `path` (made at 600 when missing) for the block, waiting for
    whoever holds it; `on_wait` is called once before waiting, when someone does."""
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
