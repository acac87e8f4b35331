"""Serving the app with uvicorn, bounded against slow and numerous clients.

- a connection must send a request's headers within `header_timeout` (from its
  opening, or from the end of its previous response), else it is closed: uvicorn
  has an idle timeout between requests, none for a client that sends nothing or
  trickles its headers;
- an idle keep-alive connection is closed after `idle_timeout` (uvicorn's own);
- a request's line and headers take at most `MAX_HEAD_BYTES` (h11's own bound, kept
  on httptools, whose llhttp has none), else 400 and the connection is closed; that
  400, as every refusal of the parser, has the JSON error shape;
- past `max_connections`, a new connection gets 503 and is closed at once, and the
  open-files limit is raised to fit them, so accepting never fails with "Too many
  open files" (the body timeout and the bytes held are the app's: `bodies`);
- warnings and errors are rate-limited (`log_limit`).

HTTP is parsed with httptools and the loop is uvloop's where they are installed (both
are dependencies; uvloop has no Windows build): on a small host that shares its cores
with Elasticsearch, their lower CPU per request is more requests served (with 8
clients on /healthz, httptools gave 25-45% more requests a second than h11).
"""

import asyncio
import copy
import importlib.util
import resource
import sys
from typing import Any, Literal

import orjson
import uvicorn
from starlette.applications import Starlette
from uvicorn.config import LOGGING_CONFIG
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from session_recall.error_policy import RETRY_AFTER_S
from session_recall.http.limits import ServeLimits
from session_recall.http.log_limit import RateLimit
from session_recall.observability.logs import LogFormat, as_json

# Descriptors besides client connections: Elasticsearch connections of every lane,
# logs, the event loop's own.
FD_RESERVE = 64
# Connections accepted in one go before any is looked at (asyncio accepts up to the
# listen backlog at a time): a connection past the cap holds a descriptor until then.
ACCEPT_BACKLOG = 64
# Descriptors kept free for connections past the cap: one batch being accepted, and the
# batch before it, answered 503 but not yet closed (asyncio closes a transport on the
# next turn of the loop). One batch only was kept once, and a burst of 300 slow
# clients against a limit of 256 files still met "Too many open files" now and then.
ACCEPT_RESERVE = 2 * ACCEPT_BACKLOG
# Bytes of a request's line and headers: h11's default, which `serve` used to enforce.
MAX_HEAD_BYTES = 16 * 1024


def run(
    app: Starlette,
    *,
    host: str,
    port: int,
    limits: ServeLimits,
    log_level: str,
    log_format: LogFormat = "text",
) -> None:
    connections = fit_open_files(limits.max_connections)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        log_config=log_config(limits.log_limit, log_level, log_format=log_format),
        server_header=False,
        http=bounded_protocol(header_timeout=limits.header_timeout, max_connections=connections),
        loop=event_loop(),
        timeout_keep_alive=limits.idle_timeout,
        backlog=ACCEPT_BACKLOG,
        # uvicorn's access line holds the path and the query string whole (ids, cursors,
        # `?access_token=`): `http.observe` writes one of its own, by route template.
        access_log=False,
    )
    uvicorn.Server(config).run()


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def event_loop() -> Literal["uvloop", "asyncio"]:
    """uvicorn's loop: uvloop when installed, else asyncio's."""
    return "uvloop" if _installed("uvloop") else "asyncio"


def parser_protocol() -> type[H11Protocol] | type[HttpToolsProtocol]:
    """uvicorn's protocol on httptools when installed, else on h11."""
    return HttpToolsProtocol if _installed("httptools") else H11Protocol


def bounded_protocol(
    *,
    header_timeout: float,
    max_connections: int,
    base: type[H11Protocol] | type[HttpToolsProtocol] | None = None,
) -> type[asyncio.Protocol]:
    """`base` (default: `parser_protocol()`) with the header timeout and the
    connection cap. Both parsers' protocols keep the current request in `cycle`, the
    open connections in `connections`."""
    parent = base or parser_protocol()
    full = _raw_response(
        503,
        {
            "error": f"The sidecar has {max_connections} open connections, its limit.",
            "hint": "Retry after Retry-After; reuse connections rather than opening many.",
        },
        retry_after=RETRY_AFTER_S,
    )
    late = _raw_response(
        408, {"error": f"No complete request headers within {header_timeout:g} s."}
    )
    too_long = _raw_response(
        400,
        {
            "error": f"The request line and headers are over {MAX_HEAD_BYTES} bytes.",
            "hint": "Send long values in the body, not the URL.",
        },
    )
    unreadable = _raw_response(400, {"error": "The request is not valid HTTP/1.1."})

    class Bounded(parent):  # type: ignore[valid-type,misc]
        _header_timer: asyncio.TimerHandle | None = None
        _head_bytes = 0

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            if len(self.connections) > max_connections:
                self.transport.write(full)
                self.transport.close()
                return
            self._await_headers()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._head_bytes = 0

        def on_url(self, url: bytes) -> None:
            self._count_head(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count_head(len(name) + len(value))
            super().on_header(name, value)

        def _count_head(self, size: int) -> None:
            # Raised in a parser callback, it ends the request as invalid: 400, closed.
            self._head_bytes += size
            if self._head_bytes > MAX_HEAD_BYTES:
                raise ValueError(f"request headers over {MAX_HEAD_BYTES} bytes")

        def send_400_response(self, msg: str) -> None:
            """The parser's refusals in the JSON shape of every other error, rather
            than the server's plain text."""
            del msg  # the server's own words, in plain text
            self.transport.write(too_long if self._head_over() else unreadable)
            self.transport.close()

        def _head_over(self) -> bool:
            if self._head_bytes > MAX_HEAD_BYTES:  # counted on httptools
                return True
            conn = getattr(self, "conn", None)  # h11's: the bytes it could not make a head of
            return conn is not None and len(conn.trailing_data[0]) > MAX_HEAD_BYTES

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._await_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_header_timer()
            super().connection_lost(exc)

        def _await_headers(self) -> None:
            self._cancel_header_timer()
            self._header_timer = self.loop.call_later(
                header_timeout, self._headers_late, self.cycle
            )

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self, armed: Any) -> None:
            waiting = self.cycle is armed and (self.cycle is None or self.cycle.response_complete)
            if waiting and not self.transport.is_closing():
                self.transport.write(late)
                self.transport.close()

    return Bounded


def fit_open_files(max_connections: int) -> int:
    """Raise the soft open-files limit so `max_connections` fit beside the reserves;
    when the hard limit is too low for that, fewer connections, said on stderr."""
    reserve = FD_RESERVE + ACCEPT_RESERVE
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = max_connections + reserve
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(hard, needed)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return max_connections
    fitted = max(1, soft - reserve)
    print(
        f"Warning: the open-files limit ({soft}) leaves room for {fitted} connections, not "
        f"{max_connections}; serving at most {fitted}. Raise it with `ulimit -n`.",
        file=sys.stderr,
    )
    return fitted


def log_config(per_kind: int, level: str, *, log_format: LogFormat = "text") -> dict[str, Any]:
    """uvicorn's logging, every handler rate-limited; the app's own lines (a warning
    from a failed search, a client gone mid-body) at `level`, and everything else
    (asyncio's errors) at WARNING, all where uvicorn's go, in its format, or with
    `log_format="json"` as JSON lines with the request id (`observability.logs`)."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {"rate_limit": {"()": RateLimit, "per_kind": per_kind}}
    for handler in config["handlers"].values():
        handler["filters"] = ["rate_limit"]
    config["loggers"]["session_recall"] = {
        "handlers": ["default"],
        "level": level.upper(),
        "propagate": False,
    }
    config["root"] = {"handlers": ["default"], "level": "WARNING"}
    return as_json(config) if log_format == "json" else config


def _raw_response(status: int, body: dict[str, str], *, retry_after: int | None = None) -> bytes:
    """A whole response, for a connection answered outside any request."""
    content = orjson.dumps(body)
    phrase = {400: "Bad Request", 408: "Request Timeout", 503: "Service Unavailable"}[status]
    head = [
        f"HTTP/1.1 {status} {phrase}",
        "content-type: application/json",
        f"content-length: {len(content)}",
        "connection: close",
    ]
    if retry_after is not None:
        head.append(f"retry-after: {retry_after}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + content
