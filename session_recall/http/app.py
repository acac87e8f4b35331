"""The ASGI app: route groups composed onto one Starlette application.

A route group brings its routes, its OpenAPI paths and models, optionally a lifespan
(the events group runs its batcher there), the paths it leaves open without a token
(the probes), and what a token bound to one user needs to reach each of its routes
(`http.auth.Needs`; a route without is the operator token's alone). `default_groups()`
are the sidecar's: health, events, erasure and recall. An application adds its own
with `create_app(settings, groups=[*default_groups(), my_group])`; a test builds an app
of the one group it needs. Every error answer, the app's own 404 and 405 included, has
the shape of `http.errors`.
"""

import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from elasticsearch import Elasticsearch
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from session_recall import __version__
from session_recall.client import failover_only, make_client
from session_recall.config import Settings
from session_recall.http.auth import TokenAuth, user_tokens
from session_recall.http.bodies import InflightBytes
from session_recall.http.errors import json_error
from session_recall.http.lanes import Lanes
from session_recall.http.limits import ServeLimits
from session_recall.http.openapi import build_document
from session_recall.http.paths import PathIds
from session_recall.http.services import GroupFactory, Services
from session_recall.indexer import Refresh
from session_recall.observability import tracing
from session_recall.observability.metrics import Metrics
from session_recall.recall import default_mode_for
from session_recall.security.tokens import UserTokens

OPENAPI_PATH = "/openapi.json"
_SEE_DOCUMENT = f"The endpoints and their methods are listed at {OPENAPI_PATH}."
log = logging.getLogger(__name__)


def default_groups() -> list[GroupFactory]:
    from session_recall.http.erasure import erasure_group
    from session_recall.http.events import events_group
    from session_recall.http.health import health_group
    from session_recall.http.kept_memories import memories_group
    from session_recall.http.reads import reads_group
    from session_recall.http.recall import recall_group

    return [health_group, events_group, erasure_group, recall_group, reads_group, memories_group]


def create_app(
    settings: Settings,
    *,
    client: Elasticsearch | None = None,
    read_client: Elasticsearch | None = None,
    groups: Sequence[GroupFactory] | None = None,
    token: SecretStr | str | None = None,
    tokens: UserTokens | None = None,
    refresh: Refresh = "false",
    limits: ServeLimits | None = None,
    enrich: bool = True,
    consolidate: bool = False,
    metrics: Metrics | None = None,
    protect_metrics: bool = False,
    tracer: Any = None,
) -> Starlette:
    """The sidecar's app. Without `client`, the writes and each lane get a client of
    their own, made from `settings` (and closed at shutdown); with one (tests), they
    share it, and `read_client`, when given, runs the searches. `token`, when set, is
    the operator token; `tokens` are the signed tokens bound to one user that serve
    takes (default: those `settings` configure, see `http.auth.user_tokens`). With
    either, `Authorization: Bearer ...` is required on every path but the probes and
    the OpenAPI document. `refresh="wait_for"` makes `POST /v1/events` answer once the
    events are searchable, unless a request says `?refresh=false`. `limits` bound
    what clients may hold and how long anything may take. With `enrich`, the events
    endpoint enriches what it stores in the background (`indexer.enrichment`); with
    `consolidate`, users' new events are mined into kept memories in the background
    (`indexer.enrichment.consolidation`), off by default.

    Every answer carries an `X-Request-Id` (`http.observe`). With `metrics`, the groups
    feed them and `GET /metrics` exposes them, open like the probes unless
    `protect_metrics`; with `tracer` (`observability.tracing.configure()`'s), each
    request is a span."""
    limits = limits or ServeLimits()
    tokens = tokens or user_tokens(settings)
    owns_client = client is None
    if client is None:
        # The writer retries within the write deadline; the client's own retries would
        # multiply it, so it has none but another node's after a connection error, and
        # no request outlives the deadline.
        client = make_client(
            settings, request_timeout=limits.write_deadline, **failover_only(settings)
        )
    lanes = Lanes.build(
        settings, limits, shared=None if owns_client else client, read_client=read_client
    )
    services = Services(
        settings=settings,
        client=client,
        limits=limits,
        lanes=lanes,
        bodies=InflightBytes(limits.max_inflight_bytes),
        refresh=refresh,
        enrich=enrich,
        consolidate=consolidate,
        metrics=metrics,
    )
    factories = list(default_groups() if groups is None else groups)
    if metrics is not None:
        from session_recall.http.metrics import metrics_group

        factories.append(functools.partial(metrics_group, protected=protect_metrics))
    built = [factory(services) for factory in factories]
    document = build_document(
        title="session-recall",
        version=__version__,
        paths=_merged([group.paths for group in built]),
        models=[model for group in built for model in group.models],
        bearer=bool(token or tokens),
    )

    async def openapi(_request: Request) -> JSONResponse:
        return JSONResponse(document)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if tracer is not None:  # last out: the spans of the requests served until now
                stack.callback(tracing.flush)
            if owns_client:
                stack.callback(client.close)
            stack.callback(lanes.close)
            for group in built:
                if group.lifespan is not None:
                    await stack.enter_async_context(group.lifespan())
            yield

    secret = token.get_secret_value() if isinstance(token, SecretStr) else token
    open_paths = frozenset({OPENAPI_PATH}).union(*(group.open_paths for group in built))
    routes: list[BaseRoute] = [Route(OPENAPI_PATH, openapi, methods=["GET"])]
    routes += [route for group in built for route in group.routes]
    middleware = [_observe(settings, routes, metrics, tracer), Middleware(PathIds)]
    if secret or tokens:
        needs = {key: need for group in built for key, need in group.needs.items()}
        middleware.append(
            Middleware(
                TokenAuth,
                operator=secret or None,
                tokens=tokens,
                open_paths=open_paths,
                routes=routes,
                needs=needs,
            )
        )
    handlers = {HTTPException: _no_route, ClientDisconnect: _client_gone}
    app = Starlette(
        routes=routes, middleware=middleware, lifespan=lifespan, exception_handlers=handlers
    )
    # A path with a trailing slash is another path (404, in the error shape), not an
    # empty 307 to the path without it.
    app.router.redirect_slashes = False
    return app


def _observe(
    settings: Settings, routes: Sequence[BaseRoute], metrics: Metrics | None, tracer: Any
) -> Middleware:
    from session_recall.http.observe import Observe
    from session_recall.http.recall import ENDPOINTS

    return Middleware(
        Observe,
        metrics=metrics,
        tracer=tracer,
        routes=routes,
        tools={path: endpoint.tool for path, endpoint in ENDPOINTS.items()},
        default_mode=default_mode_for(settings.embedder != "none"),
    )


async def _no_route(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such path, a method the path does not take) in the
    shape of every other error, rather than plain text."""
    assert isinstance(exc, HTTPException)
    path = request.url.path[:200]
    if exc.status_code == 404:
        slash = "No path ends with '/'. " if len(path) > 1 and path.endswith("/") else ""
        return json_error(404, f"There is no endpoint at {path}.", slash + _SEE_DOCUMENT)
    allowed = (exc.headers or {}).get("Allow")
    if exc.status_code == 405 and allowed:
        message = f"{request.method} is not allowed on {path}; {allowed} is."
        return json_error(405, message, _SEE_DOCUMENT, headers=exc.headers)
    return json_error(exc.status_code, exc.detail, headers=exc.headers)


async def _client_gone(request: Request, _exc: Exception) -> Response:
    """The client went away before sending its whole body: nobody reads the answer, and
    nothing went wrong here, so one line in the log rather than a traceback."""
    log.info("%s %s: the client disconnected mid-body.", request.method, request.url.path[:200])
    return Response(status_code=400)


def _merged(groups: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The groups' OpenAPI paths, the methods of one path from several groups together
    (GET /v1/users/{user}/events/{event} reads, DELETE erases)."""
    paths: dict[str, Any] = {}
    for group in groups:
        for path, item in group.items():
            paths[path] = {**paths.get(path, {}), **item}
    return paths
