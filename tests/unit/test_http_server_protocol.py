"""serve's connection bounds hold on either HTTP parser uvicorn may run: httptools (a
dependency, the default) and h11 (where httptools cannot be installed)."""

import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import orjson
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from session_recall.http.server import bounded_protocol, event_loop, parser_protocol

PARSERS = [H11Protocol, HttpToolsProtocol]
HEADER_TIMEOUT_S = 0.5
# Generous: a loaded machine must not fail the test, only a missing bound.
DEADLINE_S = 30


def _app() -> Starlette:
    async def hello(_request: Request) -> PlainTextResponse:
        return PlainTextResponse("hello")

    return Starlette(routes=[Route("/hello", hello)])


@contextmanager
def _serving(base: type, *, max_connections: int) -> Iterator[int]:
    """uvicorn in a thread, with serve's bounded protocol on `base`; yields the port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    protocol = bounded_protocol(
        header_timeout=HEADER_TIMEOUT_S, max_connections=max_connections, base=base
    )
    config = uvicorn.Config(
        _app(), host="127.0.0.1", port=port, http=protocol, log_level="error", lifespan="off"
    )
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + DEADLINE_S
    while not running.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        thread.join(timeout=0.01)
    try:
        yield port
    finally:
        running.should_exit = True
        thread.join(timeout=DEADLINE_S)


def _read_until_closed(sock: socket.socket) -> bytes:
    sock.settimeout(DEADLINE_S)
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def _get(sock: socket.socket) -> bytes:
    sock.sendall(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
    sock.settimeout(DEADLINE_S)
    received = b""
    while not received.endswith(b"hello"):
        chunk = sock.recv(65536)
        assert chunk, received
        received += chunk
    return received


@pytest.mark.parametrize("base", PARSERS, ids=lambda b: b.__name__)
def test_a_connection_that_never_finishes_its_headers_gets_408_and_is_closed(base):
    with (
        _serving(base, max_connections=8) as port,
        socket.create_connection(("127.0.0.1", port)) as slow,
    ):
        assert _get(slow).startswith(b"HTTP/1.1 200")  # kept alive, then trickles
        slow.sendall(b"GET /hello HTTP/1.1\r\nHost: t\r\n")
        answer = _read_until_closed(slow)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"No complete request headers" in answer


@pytest.mark.parametrize("base", PARSERS, ids=lambda b: b.__name__)
def test_a_connection_past_the_cap_gets_503_at_once(base):
    with (
        _serving(base, max_connections=1) as port,
        socket.create_connection(("127.0.0.1", port)) as first,
    ):
        assert _get(first).startswith(b"HTTP/1.1 200")
        with socket.create_connection(("127.0.0.1", port)) as second:
            answer = _read_until_closed(second)
        assert answer.startswith(b"HTTP/1.1 503"), answer
        assert b"retry-after" in answer.lower()
        assert _get(first).startswith(b"HTTP/1.1 200")  # the one within the cap is served


def _refused(base: type, request_bytes: bytes) -> dict[str, str]:
    """The body of the 400 that `request_bytes` gets, checked to be JSON."""
    with (
        _serving(base, max_connections=8) as port,
        socket.create_connection(("127.0.0.1", port)) as sock,
    ):
        sock.sendall(request_bytes)
        answer = _read_until_closed(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer[:300]
    assert b"content-type: application/json" in head.lower()
    found: dict[str, str] = orjson.loads(body)
    return found


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: t\r\n\r\n",
        b"GET /hello HTTP/1.1\r\nHost: t\r\nX: " + b"b" * 20_000 + b"\r\n\r\n",
    ],
    ids=["long-url", "long-header"],
)
def test_a_head_over_the_bound_is_answered_400_in_json(request_bytes):
    """On httptools, serve's parser (h11 parses a head that arrives whole, at any size)."""
    refused = _refused(HttpToolsProtocol, request_bytes)
    assert refused["error"] == "The request line and headers are over 16384 bytes."
    assert "body" in refused["hint"]


@pytest.mark.parametrize("base", PARSERS, ids=lambda b: b.__name__)
def test_what_is_not_http_is_answered_400_in_json(base):
    refused = _refused(base, b"\x00\x01 not http\r\n\r\n")
    assert refused == {"error": "The request is not valid HTTP/1.1."}


def test_serve_parses_with_httptools_on_uvloop_where_they_install():
    assert parser_protocol() is HttpToolsProtocol
    expected = "asyncio" if sys.platform == "win32" else "uvloop"
    assert event_loop() == expected
