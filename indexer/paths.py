"""Output files checked before a run starts: a dead-letter file or a checkpoint that
cannot be written would otherwise fail at the first refusal or the first save, with
events already read and nowhere to put them."""

import tempfile
from pathlib import Path

from session_recall.indexer.errors import UnwritablePath


def check_writable(path: Path, *, what: str, hint: str, replaced: bool) -> None:
    """Raise `UnwritablePath` unless `path` can be written. The file itself is neither
    created nor changed, and no folder is: a missing one is refused (a typo must not
    leave folders about). A file `replaced` by a rename (a checkpoint) also needs a
    folder that takes new files."""
    try:
        if path.is_dir():
            raise IsADirectoryError(21, "it is a folder")
        exists = path.exists()
        if exists:
            with path.open("ab"):  # appending nothing leaves content and mtime alone
                pass
        if not exists or replaced:
            # An unnamed file in the folder: a file can be made there, and none is left.
            with tempfile.TemporaryFile(dir=path.parent):
                pass
    except OSError as err:
        reason = err.strerror or str(err)
        raise UnwritablePath(f"The {what} {path} cannot be written: {reason}.", hint=hint) from None
