"""A byte offset into the input, saved atomically once everything before it is
acknowledged, so a run killed at any instant (SIGKILL included) resumes without loss.

Resuming may resend the events between the checkpoint and the crash: creates are
idempotent, so they come back as "already present", never as duplicates.
"""

import json
import os
import stat
from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from session_recall.indexer.errors import UnreadableCheckpoint


class Position(BaseModel):
    """Where the next line starts; `inode` tells a rotated or replaced file apart."""

    offset: int = Field(default=0, ge=0)
    inode: int | None = None


def load(path: Path) -> Position | None:
    try:
        return Position.model_validate_json(path.read_bytes())
    except (FileNotFoundError, NotADirectoryError):
        return None  # none saved yet; whether one can be saved there is checked apart
    except ValidationError:
        raise UnreadableCheckpoint(
            f"The checkpoint {path} does not hold a position that `ingest --checkpoint` "
            "saved (it was changed, or is another file).",
            hint="Delete it to start from the beginning (replays are idempotent), or name "
            "another file with --checkpoint.",
        ) from None
    except OSError as err:
        raise UnreadableCheckpoint(
            f"The checkpoint {path} cannot be read: {err.strerror or err}.",
            hint="Fix its permissions, or delete it to start from the beginning "
            "(replays are idempotent).",
        ) from None


def save(path: Path, position: Position) -> None:
    """Write to a temporary file, fsync it, rename it over `path`, fsync the folder:
    after a crash the file holds either the old or the new position, never a mix."""
    tmp = path.with_name(f".{path.name}.tmp")
    data = json.dumps(position.model_dump()).encode()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def resume_offset(saved: Position | None, *, inode: int, size: int) -> int:
    """Where to start reading a file: the saved offset if it is still the same file
    and not truncated below it, else the beginning (safe: replays are idempotent)."""
    if saved is None or saved.inode not in (None, inode) or saved.offset > size:
        return 0
    return saved.offset


def rotated_file(
    path: Path, saved: Position | None, *, exclude: Collection[Path] = ()
) -> Path | None:
    """The file `saved` points into, when `path` names another file now: it was
    rotated (renamed) while its tail was still unacknowledged, or while nothing ran.

    It is looked for in the same folder, by inode, among the names that extend
    `path`'s (`events.ndjson.1`, `events.ndjson-20261130`: how logrotate and loggers
    rename), other than `exclude` (the checkpoint and dead-letter files, which may be
    named so). None when `path` is still that file, or when the file is gone (deleted,
    compressed) or shorter than the saved offset (not the same content any more).
    """
    if saved is None or saved.inode is None:
        return None
    try:
        if os.stat(path).st_ino == saved.inode:
            return None
    except FileNotFoundError:
        pass
    folder = path.parent
    device = os.stat(folder).st_dev
    skip = {p.resolve() for p in exclude}
    for candidate in sorted(folder.iterdir()):
        if candidate.name == path.name or not candidate.name.startswith(path.name):
            continue
        try:
            info = os.stat(candidate, follow_symlinks=False)
        except OSError:
            continue
        if (
            info.st_ino == saved.inode
            and info.st_dev == device
            and stat.S_ISREG(info.st_mode)
            and info.st_size >= saved.offset
            and candidate.resolve() not in skip
        ):
            return candidate
    return None
