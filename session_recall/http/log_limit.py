"""Rate-limited warnings and errors, so a flood of failures (a client hammering the
sidecar with bad requests, a node gone for hours) cannot fill the disk.

Per fixed window (a minute), at most `per_kind` records of one kind (logger and
message template) and ten times that in all pass; the rest are counted, and the first
record that passes in the next window says how many were left out. Records below
WARNING (the access log) pass untouched: `--log-level warning` turns those off.
"""

import logging
import threading
import time
from collections.abc import Callable

WINDOW_S = 60.0
# Kinds that may each use their whole share in one window before all are held back.
KINDS_PER_WINDOW = 10


class RateLimit(logging.Filter):
    def __init__(self, per_kind: int = 10, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._per_kind = per_kind
        self._clock = clock
        self._lock = threading.Lock()
        self._start = clock()
        self._counts: dict[tuple[str, str], int] = {}
        self._dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        template = record.msg if isinstance(record.msg, str) else type(record.msg).__name__
        key = (record.name, template)
        with self._lock:
            dropped = 0
            if self._clock() - self._start >= WINDOW_S:
                dropped, self._dropped = self._dropped, 0
                self._start, self._counts = self._clock(), {}
            count = self._counts.get(key, 0)
            total = sum(self._counts.values())
            if count >= self._per_kind or total >= self._per_kind * KINDS_PER_WINDOW:
                self._dropped += 1
                return False
            self._counts[key] = count + 1
        if dropped:
            record.msg = (
                f"{record.getMessage()} [{dropped} more warnings and errors were not logged "
                f"in the minute before: at most {self._per_kind} of a kind a minute]"
            )
            record.args = None
        return True
