"""Google ADK: a `BaseMemoryService` on session-recall (the `adk` extra: in the checkout,
`pip install -e '.[adk]'`).

    from session_recall.integrations.adk import SessionRecallMemoryService
    runner = Runner(..., memory_service=SessionRecallMemoryService())

or `adk web --memory_service_uri=session-recall://` once `register()` has run (see
`registry`). ADK scopes memory by `(app_name, user_id)`; `scope.memory_user` maps the
pair to one user of ours, readable in every other surface.
"""

# First, so that a missing framework is named with its extra (see `extras`).
from session_recall.integrations.extras import require

require("adk", "google.adk", "Google ADK (google-adk)")

from session_recall.integrations.adk.registry import register, service_from_uri  # noqa: E402
from session_recall.integrations.adk.scope import memory_user  # noqa: E402
from session_recall.integrations.adk.service import SessionRecallMemoryService  # noqa: E402
from session_recall.integrations.adk.uri import SCHEME  # noqa: E402

__all__ = ["SCHEME", "SessionRecallMemoryService", "memory_user", "register", "service_from_uri"]
