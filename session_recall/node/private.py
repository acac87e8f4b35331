"""Files only their owner reads: a node's folders at 700 and its files at 600.

A copied or extracted file keeps the copier's umask rather than the source's mode, and
a node made by an earlier release left its data open to every account, so the modes
are set on every start (`tighten`) and each file is written private from the start
(`write`). The node itself runs with the umask 077 (`UMASK`): its segments, logs and
keystore are born private.
"""

import os
import stat
from pathlib import Path
from typing import BinaryIO

UMASK = 0o077
FILE_MODE = 0o600
FOLDER_MODE = 0o700


def tighten(root: Path) -> int:
    """Take every access of the group and of others away from `root` and everything
    below it (folders 700, files 600, programs 700); return how many had some.
    Symbolic links are left alone, and never followed."""
    if not root.exists():
        return 0
    changed = _tighten_one(str(root))
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            changed += _tighten_one(os.path.join(folder, name))
    return changed


def _tighten_one(path: str) -> int:
    found = os.lstat(path)
    if stat.S_ISLNK(found.st_mode) or not found.st_mode & 0o077:
        return 0
    os.chmod(path, stat.S_IMODE(found.st_mode) & 0o700)
    return 1


def folder(path: Path) -> Path:
    """Make `path` (and its missing parents) and leave it at 700."""
    path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    path.chmod(FOLDER_MODE)
    return path


def write(path: Path, data: str | bytes) -> None:
    """Write `path` whole at 600: created so, never readable by others for a moment."""
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    os.fchmod(handle, FILE_MODE)  # an existing file keeps its mode through O_CREAT
    with os.fdopen(handle, "wb") as out:
        out.write(data.encode("utf-8") if isinstance(data, str) else data)


def appending(path: Path) -> BinaryIO:
    """`path` open for appending, created at 600 when missing."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE), "ab")
