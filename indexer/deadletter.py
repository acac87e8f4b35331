"""The dead-letter file: NDJSON lines `{"event": <as received>, "reason": "..."}`.

It is opened on the first refusal, so a clean run leaves no empty file behind. Each
line keeps the input as it arrived (an unparsable line as text; one that is not UTF-8
as its bytes in base64, `{"event_base64": ..., "reason": ...}`), so it can be fixed
and fed back to `session-recall ingest`. A line too long to be an event is not kept
(`"event": ""`): its entry gives the input offset where it starts and the ids its
start holds instead, `{"event": "", "reason": ..., "offset": N, "ids": {...}}`.
"""

import base64
import contextlib
import os
from pathlib import Path
from typing import IO, Any

from session_recall.core import strict_json
from session_recall.indexer.errors import IndexerError
from session_recall.indexer.long_lines import LongLine
from session_recall.indexer.parsing import Undecodable


class DeadLetter:
    """Raises `IndexerError` when a line cannot be written or made durable (a full
    disk, say: the path was checked writable at the start), and again at every later
    write or sync: the run stops, and its checkpoint never passes a refusal that is
    not in the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._file: IO[bytes] | None = None
        self._failure: IndexerError | None = None

    def write(self, event: Any, reason: str) -> None:
        self._check()
        try:
            if self._file is None:
                self._file = self.path.open("ab")
            entry: dict[str, Any]
            if isinstance(event, Undecodable):
                entry = {"event_base64": base64.b64encode(event.data).decode("ascii")}
            elif isinstance(event, LongLine):
                entry = {"event": "", "offset": event.offset, "ids": event.ids()}
            else:
                entry = {"event": event}
            entry["reason"] = reason
            # An event may hold an integer past 64 bits, refused for that very reason.
            self._file.write(strict_json.dumps(entry) + b"\n")
        except OSError as err:
            raise self._failed(err) from None
        self.count += 1

    def sync(self) -> None:
        """Make the lines durable: called before a checkpoint moves past them."""
        self._check()
        if self._file is not None:
            try:
                self._file.flush()
                os.fsync(self._file.fileno())
            except OSError as err:
                raise self._failed(err) from None

    def close(self) -> None:
        """Sync and close; a failure is raised by `sync` or `write`, never here."""
        if self._file is None:
            return
        try:
            if self._failure is None:
                self.sync()
        except IndexerError:
            pass  # raised to the run already, or raised by its next sync
        finally:
            self._discard()

    def _check(self) -> None:
        if self._failure is not None:
            raise IndexerError(self._failure.message, hint=self._failure.hint)

    def _failed(self, err: OSError) -> IndexerError:
        self._failure = IndexerError(
            f"Writing the dead-letter file {self.path} failed: {err.strerror or err}; the "
            "run stopped there, and its checkpoint is before the first line not written.",
            hint="Free some space (or name another file with --dead-letter), then run the "
            "same command again; what is stored stays stored.",
        )
        self._discard()
        return self._failure

    def _discard(self) -> None:
        """Close the file, dropping what a full disk would not take."""
        file, self._file = self._file, None
        if file is None:
            return
        with contextlib.suppress(OSError):  # its buffer could not be written: raised already
            file.close()

    def __enter__(self) -> "DeadLetter":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
