"""`session-recall serve` while its node is stopped and restarted: producers get 503s
during the outage, and every event ever answered 2xx is stored."""

import itertools
import logging
import signal
import threading
from pathlib import Path

import httpx
import pytest

from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.node import wait_until
from session_recall.templates import install
from tests.support.elasticsearch import DedicatedNodes
from tests.support.ndjson import event, stored
from tests.support.serve import ready, serving

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ALIAS = "outage"


class _Producers:
    """Threads posting small batches of fresh events, recording every answer."""

    def __init__(self, url: str, threads: int = 3, batch: int = 5) -> None:
        self._url = url
        self._batch = batch
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.answers: list[tuple[int, list[str], str | None]] = []  # status, ids, Retry-After
        self._threads = [threading.Thread(target=self._run) for _ in range(threads)]

    def __enter__(self) -> "_Producers":
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=120)

    def _run(self) -> None:
        with httpx.Client(base_url=self._url, timeout=60) as client:
            while not self._stop.is_set():
                with self._lock:
                    numbers = [next(self._ids) for _ in range(self._batch)]
                events = [event(n, user=f"u{n % 4}") for n in numbers]
                try:
                    response = client.post("/v1/events", json=events)
                    answer = (
                        response.status_code,
                        [e["event_id"] for e in events],
                        response.headers.get("retry-after"),
                    )
                except httpx.TransportError:
                    answer = (0, [], None)
                with self._lock:
                    self.answers.append(answer)

    def count(self, status_class: int, since: int = 0) -> int:
        with self._lock:
            return sum(1 for s, _, _ in self.answers[since:] if s // 100 == status_class)

    def mark(self) -> int:
        with self._lock:
            return len(self.answers)


def test_events_answered_2xx_survive_a_node_restart_and_the_outage_answers_503(
    dedicated_nodes: DedicatedNodes, tmp_path: Path
):
    # The restarted node (same name, same data) listens on the same port again.
    node = dedicated_nodes.node("serve")
    url = node.start().url
    es = make_client(Settings(ELASTICSEARCH_URL=url))
    install(es, ALIAS)
    with (
        serving(es_url=url, alias=ALIAS, folder=tmp_path) as served,
        _Producers(served.url) as producers,
    ):
        assert wait_until(lambda: producers.count(2) >= 20, timeout=60)

        node.stop()
        down = producers.mark()
        assert wait_until(lambda: producers.count(5, since=down) >= 3, timeout=120)
        assert not ready(served.url)

        # Another process may take the port while the node is down: then serve would
        # write elsewhere, and the counts below would say nothing.
        assert node.start().url == url, "the node came back on another port"
        up = producers.mark()
        assert wait_until(lambda: producers.count(2, since=up) >= 20, timeout=180)
    output = served.log_text()

    # uvicorn re-raises the SIGTERM it handled once it has shut down cleanly.
    assert served.process.returncode in (0, -signal.SIGTERM), output
    assert "Traceback" not in output, output
    answers = producers.answers
    statuses = [s for s, _, _ in answers]
    logging.getLogger("tests").info(
        "answers: %d x 200, %d x 503", statuses.count(200), statuses.count(503)
    )
    assert all(retry_after and int(retry_after) > 0 for s, _, retry_after in answers if s == 503)
    assert {s for s, _, _ in answers} <= {200, 503}, "only stored (200) or retry (503) answers"
    acknowledged = [i for s, ids, _ in answers if s == 200 for i in ids]
    assert stored(es, ALIAS) >= len(acknowledged)
    es.indices.refresh(index=ALIAS)
    found = es.count(index=ALIAS, query={"terms": {"event_id": acknowledged}})["count"]
    assert found == len(acknowledged), "an event answered 2xx is missing"
    es.close()
