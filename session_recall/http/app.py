"""The ASGI app: route groups composed onto one Starlette application.

A route group brings its routes, its OpenAPI paths and models, and optionally a
lifespan (the events group runs its batcher there). Other packages add groups of
their own: `create_app(settings, groups=[*default_groups(), recall_group])`.
"""

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import Elasticsearch
from pydantic import BaseModel, SecretStr
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from session_recall import __version__
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.http.auth import BearerAuth
from session_recall.http.bodies import InflightBytes
from session_recall.http.lanes import Lanes
from session_recall.http.limits import ServeLimits
from session_recall.http.openapi import build_document
from session_recall.http.paths import RefuseEncodedSlash


@dataclass(frozen=True)
class Services:
    """What every route group may use. `client` writes events (from the batcher's own
    thread); everything else runs in a lane of `lanes`, with its own client."""

    settings: Settings
    client: Elasticsearch
    limits: ServeLimits
    lanes: Lanes
    bodies: InflightBytes


@dataclass(frozen=True)
class RouteGroup:
    routes: Sequence[BaseRoute]
    # OpenAPI path items, keyed by path, and the models their `$ref`s point to.
    paths: Mapping[str, Any] = field(default_factory=dict)
    models: Sequence[tuple[type[BaseModel], str]] = ()  # (model, "validation"|"serialization")
    lifespan: Callable[[], contextlib.AbstractAsyncContextManager[None]] | None = None
    # Paths reachable without the bearer token (probes).
    open_paths: frozenset[str] = frozenset()


GroupFactory = Callable[[Services], RouteGroup]

OPENAPI_PATH = "/openapi.json"


def default_groups() -> list[GroupFactory]:
    from session_recall.http.erasure import erasure_group
    from session_recall.http.events import events_group
    from session_recall.http.health import health_group
    from session_recall.http.recall import recall_group

    return [health_group, events_group, erasure_group, recall_group]


def create_app(
    settings: Settings,
    *,
    client: Elasticsearch | None = None,
    read_client: Elasticsearch | None = None,
    groups: Sequence[GroupFactory] | None = None,
    token: SecretStr | str | None = None,
    limits: ServeLimits | None = None,
) -> Starlette:
    """The sidecar's app. Without `client`, each lane and the writes get a client of
    their own, made from `settings` (and closed at shutdown); with one (tests), they
    share it, and `read_client`, when given, runs the searches. `token`, when set, is
    required as `Authorization: Bearer ...` on every path but the probes and the
    OpenAPI document."""
    limits = limits or ServeLimits()
    owns_client = client is None
    if client is None:
        # The writer retries within the write deadline; the client's own retries would
        # multiply it, so it has none, and no request outlives the deadline.
        client = make_client(settings, max_retries=0, request_timeout=limits.write_deadline)
    lanes = Lanes.build(
        settings, limits, shared=None if owns_client else client, read_client=read_client
    )
    services = Services(
        settings=settings,
        client=client,
        limits=limits,
        lanes=lanes,
        bodies=InflightBytes(limits.max_inflight_bytes),
    )
    built = [factory(services) for factory in (default_groups() if groups is None else groups)]
    document = build_document(
        title="session-recall",
        version=__version__,
        paths={path: item for group in built for path, item in group.paths.items()},
        models=[model for group in built for model in group.models],
        bearer=token is not None,
    )

    async def openapi(_request: Request) -> JSONResponse:
        return JSONResponse(document)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if owns_client:
                stack.callback(client.close)
            stack.callback(lanes.close)
            for group in built:
                if group.lifespan is not None:
                    await stack.enter_async_context(group.lifespan())
            yield

    secret = token.get_secret_value() if isinstance(token, SecretStr) else token
    open_paths = frozenset({OPENAPI_PATH}).union(*(group.open_paths for group in built))
    middleware = [Middleware(RefuseEncodedSlash)]
    if secret:
        middleware.append(Middleware(BearerAuth, token=secret, open_paths=open_paths))
    routes: list[BaseRoute] = [Route(OPENAPI_PATH, openapi, methods=["GET"])]
    routes += [route for group in built for route in group.routes]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
