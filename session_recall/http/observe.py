"""What `serve` tells of each request: its id, its metrics, and its span.

- **Request id**: taken from the request's `X-Request-Id` when it sends a usable one
  (up to 128 characters of letters, digits and `-_.:/+=@`), else made here; returned in
  the response's `X-Request-Id`, and on every log line written while the request is
  handled (`observability.logs`), the threads it hands work to included.
- **Metrics** (`observability.metrics`): each request by route template, method and
  status, and its duration; a recall tool's by tool and search mode, and its errors by
  class. Never the path itself, which holds user ids.
- **Span** (with `observability.tracing` configured): one per request, named by its
  method and route template, the Elasticsearch client's spans under it; a caller's
  `traceparent` makes it part of the caller's trace.
"""

import re
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from session_recall.observability.logs import REQUEST_ID
from session_recall.observability.metrics import Metrics, error_class

HEADER = b"x-request-id"
_USABLE_ID = re.compile(rb"[A-Za-z0-9_.:/+=@-]{1,128}")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"
MEMORY_TOOL = "memory_search"
MODES = frozenset({"keyword", "semantic", "hybrid"})


def request_id(headers: Sequence[tuple[bytes, bytes]]) -> str:
    """The caller's id when it sent a usable one, else a new one."""
    for name, value in headers:
        if name == HEADER and _USABLE_ID.fullmatch(value):
            return value.decode("ascii")
    return secrets.token_hex(16)


class Observe:
    """The ASGI middleware, outermost: it sees every answer, refusals included.
    `tools` maps a recall route's template to its tool's name; `default_mode` is
    memory_search's mode when a request names none."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        metrics: Metrics | None,
        tracer: Any,
        routes: Sequence[BaseRoute],
        tools: Mapping[str, str],
        default_mode: str,
    ) -> None:
        self._app = app
        self._metrics = metrics
        self._tracer = tracer
        self._routes = routes
        self._tools = tools
        self._default_mode = default_mode
        # Each series' child, found once: `labels()` checks and locks at every call, which
        # costs more than the count and the observation themselves. Route templates,
        # methods, statuses, tools and modes are few, so these stay small.
        self._http: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        self._recall: dict[tuple[str, str], tuple[Any, Any]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        rid = request_id(scope["headers"])
        header = (HEADER, rid.encode("ascii"))
        status = 500  # unless an answer starts: the app raised

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        token = REQUEST_ID.set(rid)
        started = time.perf_counter()
        try:
            if self._tracer is None:
                await self._app(scope, receive, sending)
            else:
                await self._traced(scope, receive, sending, rid, lambda: status)
        finally:
            REQUEST_ID.reset(token)
            if self._metrics is not None:
                self._count(scope, status, time.perf_counter() - started)

    async def _traced(
        self, scope: Scope, receive: Receive, send: Send, rid: str, status: Any
    ) -> None:
        from opentelemetry import propagate, trace

        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        method = _method(scope)
        with self._tracer.start_as_current_span(
            method,
            context=propagate.extract(carrier),
            kind=trace.SpanKind.SERVER,
            attributes={"http.request.method": method, "session_recall.request_id": rid},
        ) as span:
            try:
                await self._app(scope, receive, send)
            finally:
                route = self._route(scope)
                span.update_name(f"{method} {route}")
                span.set_attribute("http.route", route)
                span.set_attribute("http.response.status_code", status())
                if status() >= 500:
                    span.set_status(trace.StatusCode.ERROR)

    def _count(self, scope: Scope, status: int, seconds: float) -> None:
        metrics = self._metrics
        assert metrics is not None
        route, method = self._route(scope), _method(scope)
        http = self._http.get((route, method, status))
        if http is None:
            http = self._http[route, method, status] = (
                metrics.http_requests.labels(route, method, str(status)),
                metrics.http_seconds.labels(route, method),
            )
        http[0].inc()
        http[1].observe(seconds)
        tool = self._tools.get(route)
        if tool is None:
            return
        mode = self._mode(scope) if tool == MEMORY_TOOL else "keyword"
        recall = self._recall.get((tool, mode))
        if recall is None:
            recall = self._recall[tool, mode] = (
                metrics.recall_requests.labels(tool, mode),
                metrics.recall_seconds.labels(tool, mode),
            )
        recall[0].inc()
        recall[1].observe(seconds)
        if status >= 400:
            metrics.recall_errors.labels(tool, error_class(status)).inc()

    def _route(self, scope: Scope) -> str:
        """The template of the route the request was for, found by the router, or
        matched here for a request answered before it (a refused token)."""
        route = scope.get("route")
        if isinstance(route, Route):
            return route.path
        for candidate in self._routes:
            match, _ = candidate.matches(scope)
            if match is not Match.NONE and isinstance(candidate, Route):
                return candidate.path
        return UNMATCHED

    def _mode(self, scope: Scope) -> str:
        for pair in scope.get("query_string", b"").split(b"&"):
            name, _, value = pair.partition(b"=")
            if name == b"mode":
                mode = value.decode("latin-1")
                return mode if mode in MODES else "invalid"
        return self._default_mode


def _method(scope: Scope) -> str:
    method: str = scope["method"]
    return method if method in _METHODS else "other"
