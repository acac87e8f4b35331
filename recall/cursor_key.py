"""The key that signs cursors: from configuration, else one kept in the local home.

A CLI call that returns a cursor and the next call that passes it back run in two
processes, so a random key per process would not do. The generated key is written
once, with mode 0600, and never replaced: two processes racing to create it agree on
the first one written.
"""

import base64
import binascii
import os
import secrets
from pathlib import Path

from session_recall.core.errors import ConfigurationError
from session_recall.recall.cursor import MIN_KEY_BYTES

KEY_FILE = "cursor.key"
_KEY_BYTES = 32


def load_cursor_key(home: Path, configured: str | None = None) -> bytes:
    """`configured` (`SESSION_RECALL_CURSOR_KEY`) when set, else the key kept in
    `home/cursor.key`, made on first use."""
    if configured is not None:
        key = configured.encode("utf-8")
        if len(key) < MIN_KEY_BYTES:
            raise ConfigurationError(
                f"SESSION_RECALL_CURSOR_KEY is shorter than {MIN_KEY_BYTES} bytes.",
                hint="Use a random value, e.g. the output of `openssl rand -base64 32`.",
            )
        return key
    path = home / KEY_FILE
    try:
        return _read(path)
    except FileNotFoundError:
        return _create(path)


def _read(path: Path) -> bytes:
    text = path.read_text(encoding="ascii", errors="replace").strip()
    try:
        key = base64.urlsafe_b64decode(text.encode("ascii", errors="replace"))
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != _KEY_BYTES:
        raise ConfigurationError(
            f"The cursor key file {path} is damaged.",
            hint="Delete it and a new one is made; cursors issued before stop working.",
        )
    return key


def _create(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(_KEY_BYTES)
    draft = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the umask could only narrow it; make it exact
        os.write(fd, base64.urlsafe_b64encode(key) + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        # A hard link appears whole and fails if the name exists: first writer wins.
        os.link(draft, path)
    except FileExistsError:
        return _read(path)
    finally:
        draft.unlink(missing_ok=True)
    return key
