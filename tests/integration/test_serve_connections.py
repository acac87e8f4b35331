"""`serve` against many slow clients, as a real process under a low open-files limit:
connections that never finish their headers are closed, those past the cap get 503 at
once, a body that stalls gets 408, and a flood of bad requests leaves a short log."""

import resource
import selectors
import socket
import time
from collections.abc import Iterator

import pytest

from session_recall.http.server import ACCEPT_RESERVE, FD_RESERVE, MAX_HEAD_BYTES
from session_recall.node import wait_until
from tests.support.serve import Served, ready, serving

pytestmark = pytest.mark.integration

# The limits under test, from the environment (as a deployment sets them).
LIMITS = {
    # Long enough that all the slow clients below are connected before the first is
    # closed, however loaded the machine: otherwise the cap may never be reached.
    "SESSION_RECALL_HEADER_TIMEOUT": "10",
    "SESSION_RECALL_BODY_TIMEOUT": "1",
    "SESSION_RECALL_IDLE_TIMEOUT": "1",
    "SESSION_RECALL_LOG_LIMIT": "5",
}
# Low enough that the slow clients below would exhaust it; the default connection
# cap (512) does not fit in it, so serve lowers the cap to what does.
OPEN_FILES = 256
SLOW_CLIENTS = 300
# Generous: the timeouts (1 s) are the behaviour under test, a loaded machine is not.
# Without them, a slow connection stays open for as long as its client wants.
DEADLINE_S = 30


def _low_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))


@pytest.fixture(scope="module")
def served(
    es_url: str, module_alias: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("serve")
    with serving(
        es_url=es_url, alias=module_alias, folder=home, env=LIMITS, preexec_fn=_low_open_files
    ) as served:
        assert wait_until(lambda: ready(served.url), timeout=60), served.log_text()
        yield served


def _answers(sockets: list[socket.socket], *, timeout: float) -> dict[socket.socket, bytes]:
    """What the server sent on each socket up to its closing it; sockets it had not
    closed by `timeout` are left out."""
    received: dict[socket.socket, bytes] = {s: b"" for s in sockets}
    closed: dict[socket.socket, bytes] = {}
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while len(closed) < len(sockets) and (left := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(timeout=left):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(65536)
                except ConnectionResetError:
                    data = b""
                if data:
                    received[sock] += data
                else:
                    closed[sock] = received[sock]
                    selector.unregister(sock)
    return closed


def _status(answer: bytes) -> int | None:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None


def test_slow_connections_are_closed_and_those_past_the_cap_refused_at_once(served: Served):
    sockets = []
    try:
        for _ in range(SLOW_CLIENTS):
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=DEADLINE_S)
            sock.sendall(b"POST /v1/events HTTP/1.1\r\nHost: sidecar\r\n")  # never finished
            sockets.append(sock)
        closed = _answers(sockets, timeout=DEADLINE_S)
        assert len(closed) == SLOW_CLIENTS, (
            f"{SLOW_CLIENTS - len(closed)} slow connections were still open after {DEADLINE_S} s"
        )
        statuses = [_status(answer) for answer in closed.values()]
        assert statuses.count(503) > 0, "no connection was past the cap"
        assert set(statuses) <= {408, 503, None}, statuses
        assert wait_until(lambda: ready(served.url), timeout=DEADLINE_S)
    finally:
        for sock in sockets:
            sock.close()
    log = served.log_text()
    assert "Too many open files" not in log, log[-2000:]
    fitted = OPEN_FILES - FD_RESERVE - ACCEPT_RESERVE
    assert f"leaves room for {fitted} connections" in log, log[-2000:]


def test_a_body_that_stalls_gets_408_and_an_idle_connection_is_closed(served: Served):
    with socket.create_connection(("127.0.0.1", served.port), timeout=DEADLINE_S) as stalled:
        stalled.sendall(
            b"POST /v1/events HTTP/1.1\r\nHost: sidecar\r\ncontent-type: application/json\r\n"
            b'content-length: 1000\r\n\r\n[{"userId": '
        )
        (answer,) = _answers([stalled], timeout=DEADLINE_S).values()
    assert _status(answer) == 408, answer
    assert b"did not arrive within 1 s" in answer

    with socket.create_connection(("127.0.0.1", served.port), timeout=DEADLINE_S) as idle:
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: sidecar\r\n\r\n")  # keep-alive
        (answer,) = _answers([idle], timeout=DEADLINE_S).values()
    assert _status(answer) == 200, answer


def test_request_headers_over_the_bound_get_400_and_the_connection_is_closed(served: Served):
    with socket.create_connection(("127.0.0.1", served.port), timeout=DEADLINE_S) as big:
        padding = b"x" * (MAX_HEAD_BYTES + 1)
        big.sendall(b"GET /healthz HTTP/1.1\r\nHost: sidecar\r\nX-Pad: " + padding + b"\r\n\r\n")
        (answer,) = _answers([big], timeout=DEADLINE_S).values()
    assert _status(answer) == 400, answer[:200]


def test_a_flood_of_bad_requests_logs_a_few_lines_not_one_per_request(served: Served):
    before = served.log_text().count("Invalid HTTP request")
    for _ in range(200):
        with socket.create_connection(("127.0.0.1", served.port), timeout=DEADLINE_S) as bad:
            bad.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")
            _answers([bad], timeout=DEADLINE_S)
    # Every bad request was answered and closed: its warning, if any, is written.
    logged = served.log_text().count("Invalid HTTP request") - before
    assert 0 < logged <= int(LIMITS["SESSION_RECALL_LOG_LIMIT"]), logged
