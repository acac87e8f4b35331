"""The key that signs cursors: from configuration, else one kept in the local home
(`core.key_file`: made once, mode 0600, never replaced)."""

from pathlib import Path

from session_recall.core.key_file import configured_key, kept_key
from session_recall.recall.cursor import MIN_KEY_BYTES

KEY_FILE = "cursor.key"


def load_cursor_key(home: Path, configured: str | None = None) -> bytes:
    """`configured` (`SESSION_RECALL_CURSOR_KEY`) when set, else the key kept in
    `home/cursor.key`, made on first use."""
    if configured is not None:
        return configured_key(
            configured, variable="SESSION_RECALL_CURSOR_KEY", min_bytes=MIN_KEY_BYTES
        )
    return kept_key(home / KEY_FILE, lost="cursors issued before stop working")
