"""Concurrent large bodies hold no more memory than the bytes-in-flight bound allows,
and `serve` gives it back afterwards: a real process, its resident size measured."""

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import psutil
import pytest
from elasticsearch import Elasticsearch

from session_recall.node import wait_until
from tests.support.ndjson import event, stored
from tests.support.serve import ready, serving

pytestmark = pytest.mark.integration

MIB = 1024 * 1024
INFLIGHT = 24 * MIB  # two of the bodies below at a time
BODIES, EVENTS = 8, 10_000
TEXT = "x" * 1_050  # 10,000 events of about 1.1 KB: an 11 MB body
# Parsed events and the bulk requests made of them take a few times a body's size.
PEAK_FACTOR = 6
DEADLINE_S = 120


def _body(k: int) -> bytes:
    events = (event(k * EVENTS + i, user=f"u{i % 20}", text=f"{TEXT} {i}") for i in range(EVENTS))
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


@pytest.fixture
def served(es_url: str, alias: str, tmp_path: Path) -> Iterator[tuple[str, psutil.Process]]:
    limits = {
        "SESSION_RECALL_MAX_INFLIGHT_BYTES": str(INFLIGHT),
        # Room for every body to wait its turn: this test is about memory, not deadlines.
        "SESSION_RECALL_WRITE_DEADLINE": str(DEADLINE_S),
        # The bodies alone: the enrichment beside them holds memory of its own (its
        # pages, the model), a plateau that later bursts do not raise (BENCHMARKS.md).
        "SESSION_RECALL_ENRICH": "false",
    }
    with serving(es_url=es_url, alias=alias, folder=tmp_path, env=limits) as served:
        assert wait_until(lambda: ready(served.url), timeout=60), served.log_text()
        yield served.url, psutil.Process(served.process.pid)


def _post(url: str, body: bytes) -> int:
    headers = {"content-type": "application/x-ndjson"}
    return httpx.post(
        f"{url}/v1/events", content=body, headers=headers, timeout=2 * DEADLINE_S
    ).status_code


def test_concurrent_large_bodies_stay_within_the_bound_and_memory_comes_back(
    served: tuple[str, psutil.Process], es: Elasticsearch, alias: str
):
    url, process = served
    assert _post(url, _body(BODIES)) == 200  # warm: every code path loaded once
    baseline = process.memory_info().rss
    bodies = [_body(k) for k in range(BODIES)]
    peak, statuses = baseline, []
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.wait(0.05):
            peak = max(peak, process.memory_info().rss)

    watcher = threading.Thread(target=watch)
    watcher.start()
    senders = [
        threading.Thread(target=lambda b=body: statuses.append(_post(url, b))) for body in bodies
    ]
    try:
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(timeout=2 * DEADLINE_S)
    finally:
        done.set()
        watcher.join(timeout=10)

    assert statuses == [200] * BODIES
    assert stored(es, alias) == (BODIES + 1) * EVENTS
    grown = (peak - baseline) / MIB
    assert grown <= PEAK_FACTOR * INFLIGHT / MIB, f"{grown:.0f} MiB over the baseline at peak"
    assert wait_until(lambda: process.memory_info().rss <= baseline + INFLIGHT, timeout=30), (
        f"{(process.memory_info().rss - baseline) / MIB:.0f} MiB still held after the burst"
    )
