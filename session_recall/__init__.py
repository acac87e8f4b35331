"""session-recall: searchable, user-isolated memory of AI agent sessions.

One import namespace, in layers (the import contract in pyproject.toml holds them):

- `session_recall.core`: instants, the base error and its kinds, digests. It imports
  nothing else of ours.
- `session_recall.indexer` (ingestion) and `session_recall.recall` (search): the
  libraries. They import the core only, never each other, never an adapter.
  `session_recall.mappings` holds the index templates.
- everything else (configuration, the client, the local node, `setup`, the tools, the
  CLI, HTTP and MCP): the application, thin adapters over the libraries.

`Settings` is re-exported lazily, so importing a library does not load the
application's configuration stack.
"""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from session_recall.config import Settings
    from session_recall.core import Instant, SessionRecallError

__all__ = ["Instant", "SessionRecallError", "Settings", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Settings":
        from session_recall.config import Settings

        return Settings
    if name in ("Instant", "SessionRecallError"):
        from session_recall import core

        return getattr(core, name)
    raise AttributeError(f"module 'session_recall' has no attribute {name!r}")
