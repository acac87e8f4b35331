"""A random signing key: from configuration, else kept in a file only its owner reads.

Two processes that must agree on a key (a CLI call that returns a cursor and the next
that passes it back; `tokens issue` and `serve`) run apart, so a random key per process
would not do. The generated key is written once, with mode 0600, and never replaced:
two processes racing to create it agree on the first one written.
"""

import base64
import binascii
import os
import secrets
from pathlib import Path

from session_recall.core.errors import ConfigurationError

KEY_BYTES = 32


def configured_key(value: str, *, variable: str, min_bytes: int) -> bytes:
    """A key given in `variable`, refused when shorter than `min_bytes`."""
    key = value.encode("utf-8")
    if len(key) < min_bytes:
        raise ConfigurationError(
            f"{variable} is shorter than {min_bytes} bytes.",
            hint="Use a random value, e.g. the output of `openssl rand -base64 32`.",
        )
    return key


def read_key(path: Path, *, lost: str) -> bytes:
    """The key kept at `path`; FileNotFoundError when there is none. `lost` says what
    stops working when a damaged file is replaced."""
    text = path.read_text(encoding="ascii", errors="replace").strip()
    try:
        key = base64.urlsafe_b64decode(text.encode("ascii", errors="replace"))
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise ConfigurationError(
            f"The key file {path} is damaged.",
            hint=f"Delete it and a new one is made; {lost}.",
        )
    return key


def kept_key(path: Path, *, lost: str) -> bytes:
    """The key kept at `path`, made on first use."""
    try:
        return read_key(path, lost=lost)
    except FileNotFoundError:
        return _create(path, lost=lost)


def _create(path: Path, *, lost: str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(KEY_BYTES)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
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
        return read_key(path, lost=lost)
    finally:
        draft.unlink(missing_ok=True)
    return key
