"""The HTTP adapter: a Starlette app (served by uvicorn) over the `indexer` and `recall`
libraries."""

from session_recall.http.app import create_app, default_groups
from session_recall.http.services import GroupFactory, RouteGroup, Services

__all__ = ["GroupFactory", "RouteGroup", "Services", "create_app", "default_groups"]
