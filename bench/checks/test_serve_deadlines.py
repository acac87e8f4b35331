"""A hung node (SIGSTOP) holds no caller past its deadline: events, recall, erasure
and /readyz each get their 503 in bounded time, an MCP tool call its error line
(retry), and the sidecar serves again as soon as the node does."""

import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from starlette.testclient import TestClient

from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.http.limits import ServeLimits
from session_recall.node import wait_until
from session_recall.templates import install
from tests.integration.test_mcp import mcp_server
from tests.support.elasticsearch import DedicatedNodes
from tests.support.ndjson import event
from tests.support.network import LIVENESS_MARGIN_S

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ALIAS = "frozen"
WRITE_DEADLINE, READ_DEADLINE = 3.0, 2.0


def _timed(call: Callable[[], httpx.Response]) -> tuple[httpx.Response, float]:
    start = time.monotonic()
    response = call()
    return response, time.monotonic() - start


def test_a_frozen_node_gets_every_caller_a_503_within_its_deadline(
    dedicated_nodes: DedicatedNodes, tmp_path: Path
):
    info = dedicated_nodes.start("frozen")
    es = make_client(Settings(ELASTICSEARCH_URL=info.url))
    install(es, ALIAS)
    es.close()
    settings = Settings(
        ELASTICSEARCH_URL=info.url, SESSION_RECALL_INDEX=ALIAS, SESSION_RECALL_HOME=tmp_path
    )
    limits = ServeLimits(write_deadline=WRITE_DEADLINE, read_deadline=READ_DEADLINE)
    recall = "/v1/users/alice/tools/cross_session_search"
    search = {"innerThought": "...", "query": "weather"}
    with TestClient(create_app(settings, limits=limits)) as web:
        assert web.post("/v1/events", json=event(0)).status_code == 200
        calls: list[tuple[str, Callable[[], httpx.Response], float]] = [
            ("event", lambda: web.post("/v1/events", json=event(1)), WRITE_DEADLINE),
            ("recall", lambda: web.post(recall, json=search), READ_DEADLINE),
            ("erasure", lambda: web.delete("/v1/users/bob"), WRITE_DEADLINE),
            ("readyz", lambda: web.get("/readyz"), READ_DEADLINE),
        ]
        answers: dict[str, tuple[httpx.Response, float, float]] = {}
        # An agent's MCP session, opened while the node answers; its tool call is made
        # while the node is frozen, like the HTTP calls.
        server = mcp_server(info.url, ALIAS, str(tmp_path), "--user", "alice",
                            "--read-deadline", str(READ_DEADLINE))  # fmt: skip
        tool: dict[str, object] = {}

        async def frozen_calls() -> None:
            with open(os.devnull, "w") as errlog:
                async with (
                    stdio_client(server, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    os.killpg(info.pgid, signal.SIGSTOP)
                    for name, call, deadline in calls:
                        answers[name] = (*_timed(call), deadline)
                    start = time.monotonic()
                    tool["result"] = await session.call_tool("cross_session_search", search)
                    tool["took"] = time.monotonic() - start

        try:
            anyio.run(frozen_calls)
        finally:
            os.killpg(info.pgid, signal.SIGCONT)

        # How long each HTTP call took is logged, not asserted (speed is the benchmarks'):
        # that the deadline answered is in the answer's own words.
        logging.getLogger("tests").info(
            "answers while frozen: %s, the MCP tool call %.1f s",
            {name: (r.status_code, round(took, 1)) for name, (r, took, _) in answers.items()},
            tool["took"],
        )
        for name, (response, _, deadline) in answers.items():
            assert response.status_code == 503, (name, response.text)
            assert f"within the {deadline:g} s deadline" in response.text, (name, response.text)
            if name != "readyz":
                assert int(response.headers["retry-after"]) > 0, name
        result = tool["result"]
        assert result.is_error, result  # type: ignore[attr-defined]
        text = result.content[0].text  # type: ignore[attr-defined]
        assert "did not answer the search" in text and "retry" in text, text
        # The tool's words are the client's whatever its timeout: that the call ended
        # near --read-deadline, not at the client's own 30 s, is a liveness bound.
        assert tool["took"] < READ_DEADLINE + LIVENESS_MARGIN_S, tool["took"]  # type: ignore[operator]
        # The node answers again: so does the sidecar, without a restart.
        assert wait_until(
            lambda: web.post("/v1/events", json=event(2)).status_code == 200, timeout=120
        )
        assert web.get("/readyz").status_code == 200
