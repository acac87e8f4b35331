"""`session-recall://` in ADK's service registry, so `adk web` and `adk run` can name it:

    adk web --memory_service_uri=session-recall://my-index?mode=keyword

The URI may carry the index (its host part) and the search mode (`?mode=`); the rest
comes from the usual settings (`ELASTICSEARCH_URL`, `ELASTICSEARCH_API_KEY`...). A URI
with credentials is refused: a secret in a URI ends up in logs and process lists.

`register()` adds the scheme; an agents folder's `services.py` calls it, or its
`services.yaml` names the class:

    services:
      - scheme: session-recall
        type: memory
        class: session_recall.integrations.adk.SessionRecallMemoryService
"""

from typing import Any

from google.adk.cli.service_registry import get_service_registry

from session_recall.integrations.adk.service import SessionRecallMemoryService
from session_recall.integrations.adk.uri import SCHEME


def service_from_uri(uri: str, **kwargs: Any) -> SessionRecallMemoryService:
    """The factory ADK's registry calls: `(uri, agents_dir=...)`."""
    return SessionRecallMemoryService(uri=uri, agents_dir=kwargs.get("agents_dir"))


def register() -> None:
    """Add `session-recall://` to ADK's registry (again: it replaces the entry)."""
    get_service_registry().register_memory_service(SCHEME, service_from_uri)
