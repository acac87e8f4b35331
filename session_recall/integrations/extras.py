"""Each adapter's framework comes with an extra of its own: an adapter imported
without it says which extra to install, in one line, rather than Python's
`No module named 'google'` (or `'agents'`, or `'langchain_core'`)."""

import importlib

from session_recall.core.extras import extra_hint


class MissingExtra(ModuleNotFoundError):
    """The framework an adapter needs is not installed; the message names its extra."""


def require(extra: str, module: str, framework: str) -> None:
    """Import `module` (the framework's), or raise `MissingExtra` naming `extra`. A
    module the framework itself lacks is not ours to word: that error passes as it is."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as err:
        missing = err.name or ""
        if not missing or not (module == missing or module.startswith(f"{missing}.")):
            raise
        raise MissingExtra(
            f"{framework} is not installed, and this adapter needs it: install "
            f"{extra_hint(extra)}.",
            name=missing,
        ) from None
