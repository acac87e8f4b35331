"""session-recall: searchable, user-isolated memory of AI agent sessions.

The shared plumbing lives here (configuration, the Elasticsearch client, the local
node, index templates, timestamps) together with the thin adapters (CLI, HTTP, MCP).
Ingestion is the `indexer` package, search is the `recall` package.
"""

__version__ = "0.1.0"

from session_recall.config import Settings
from session_recall.errors import SessionRecallError
from session_recall.instant import Instant

__all__ = ["Instant", "SessionRecallError", "Settings", "__version__"]
