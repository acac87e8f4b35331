"""Google ADK: a `BaseMemoryService` on session-recall (the `adk` extra: in the checkout,
`pip install -e '.[adk]'`).

    from session_recall.integrations.adk import SessionRecallMemoryService
    runner = Runner(..., memory_service=SessionRecallMemoryService())

or `adk web --memory_service_uri=session-recall://` once `register()` has run (see
`registry`). ADK scopes memory by `(app_name, user_id)`; `scope.memory_user` maps the
pair to one user of ours, readable in every other surface.
"""

from session_recall.integrations.adk.registry import register, service_from_uri
from session_recall.integrations.adk.scope import memory_user
from session_recall.integrations.adk.service import SessionRecallMemoryService
from session_recall.integrations.adk.uri import SCHEME

__all__ = ["SCHEME", "SessionRecallMemoryService", "memory_user", "register", "service_from_uri"]
