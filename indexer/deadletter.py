"""The dead-letter file: NDJSON lines `{"event": <as received>, "reason": "..."}`.

It is opened on the first refusal, so a clean run leaves no empty file behind. Each
line keeps the input as it arrived (an unparsable line as text), so it can be fixed
and fed back to `session-recall ingest`.
"""

import os
from pathlib import Path
from typing import IO, Any

import orjson

from session_recall.indexer.errors import IndexerError


class DeadLetter:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._file: IO[bytes] | None = None

    def write(self, event: Any, reason: str) -> None:
        try:
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("ab")
            self._file.write(orjson.dumps({"event": event, "reason": reason}) + b"\n")
        except OSError as err:  # a full disk, say: checked writable at the start
            raise IndexerError(
                f"Writing the dead-letter file {self.path} failed: {err.strerror or err}.",
                hint="Fix that, then run the same command again; what is stored stays.",
            ) from None
        self.count += 1

    def sync(self) -> None:
        """Make the lines durable: called before a checkpoint moves past them."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self.sync()
            self._file.close()
            self._file = None

    def __enter__(self) -> "DeadLetter":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
