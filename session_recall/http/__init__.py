"""The HTTP adapter: a Starlette app (served by uvicorn) over the `indexer` library."""

from session_recall.http.app import GroupFactory, RouteGroup, Services, create_app, default_groups

__all__ = ["GroupFactory", "RouteGroup", "Services", "create_app", "default_groups"]
