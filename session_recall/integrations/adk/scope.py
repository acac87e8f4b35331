"""ADK's memory scope, `(app_name, user_id)`, as one user id of ours: the mapping lives
in `session_recall.recall.adk_scope`, below the adapters, so that `serve` can bind a
token to an ADK app and user with the very same function."""

from session_recall.recall import memory_user

__all__ = ["memory_user"]
