"""`serve` under load: 100-event batches from 8 and from 32 concurrent clients, single
events from one client, and recall over HTTP against the library call.

`serve` runs in a named configuration (`bench.configuration`). As a default install
runs it (the default embedder, its enrichment in a background thread): 100-event
batches from 8 clients, then the wait until the enrichment has caught up (`/readyz`
reports the lag), then single events and recall, on that alias. Stripped down (no
embedder, no enrichment): the batches from 8 and from 32 clients.

`serve` runs as `session-recall serve` in a process of its own, on a fresh alias per
batch load; the load generator (`bench.serve_load`) runs in another, and reports its own
CPU. For the batch loads, the CPU per event of `serve` (from its process's CPU times)
and of the node (as for ingest) are reported with `serve`'s peak RSS. For recall with 8
clients, the same three CPU times per request, and what they allow: the requests per
second at which they would fill every core of the machine, the most it could answer.

Single events and recall are measured once the 8-client load has settled (refreshed,
its merges done), so that they do not share the node with that load's merging; recall
through the library and over HTTP alternates in blocks, so both meet the same node.
"""

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
from elasticsearch import Elasticsearch

from bench.configuration import Configuration
from bench.ingest_bench import PeakRss
from bench.soak import Serve, free_port
from bench.timing import percentile
from session_recall.config import Settings
from session_recall.tools import BoundTool, cross_session_tool
from session_recall.tools.searchers import searchers_for

REPO = Path(__file__).resolve().parents[1]
BATCH = 100
RECALL_BLOCK = 50  # calls per block of recall_side_by_side


@contextmanager
def serving(es_url: str, alias: str, home: Path, setup: Configuration) -> Iterator[Serve]:
    log = home / f"{alias}-serve.log"
    env = {**setup.env, "SESSION_RECALL_ENRICH": "true" if setup.enrich else "false"}
    serve = Serve(es_url, home, free_port(), log, alias=alias, env=env)
    serve.start()
    try:
        yield serve
    finally:
        serve.stop()


def load(mode: str, url: str, *args: str) -> dict[str, Any]:
    """One run of the load generator, in a process of its own."""
    command = [sys.executable, "-m", "bench.serve_load", mode, url, *args]
    done = subprocess.run(command, capture_output=True, cwd=REPO, check=False, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"bench.serve_load {mode} failed: {done.stderr.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _cpu_s(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def _costed(
    serve: Serve, node_cpu_s: Callable[[], float], run: Callable[[], dict[str, Any]]
) -> tuple[dict[str, Any], float, float]:
    """`run`'s result, with the CPU seconds `serve` and the node spent meanwhile."""
    assert serve.process is not None
    process = psutil.Process(serve.process.pid)
    serve_cpu, node_cpu = _cpu_s(process), node_cpu_s()
    result = run()
    return result, _cpu_s(process) - serve_cpu, node_cpu_s() - node_cpu


def batches(
    serve: Serve, path: Path, events: int, clients: int, node_cpu_s: Callable[[], float]
) -> dict[str, Any]:
    assert serve.process is not None
    with PeakRss(serve.process.pid) as rss:
        result, serve_cpu, node_cpu = _costed(
            serve,
            node_cpu_s,
            lambda: load(
                "batches", serve.url, "--file", str(path), "--clients", str(clients),
                "--batch", str(BATCH),
            ),
        )  # fmt: skip
    if result["units"] != events:
        raise RuntimeError(f"serve stored {result['units']} events, not {events}")
    return {
        **result,
        "events_per_s": result["units_per_s"],
        "serve_cpu_us_per_event": serve_cpu / events * 1e6,
        "node_cpu_us_per_event": node_cpu / events * 1e6,
        "generator_cpu_us_per_event": result["generator_cpu_s"] / events * 1e6,
        "peak_rss_mb": rss.peak / 2**20,
    }


def recall_load(
    serve: Serve, node_cpu_s: Callable[[], float], clients: int, requests: int, *args: str
) -> dict[str, Any]:
    """Recall over HTTP from `clients` clients, with the CPU each request cost `serve`,
    the node and the load generator, and the requests per second at which that CPU
    would fill every core (`cpu_bound_requests_per_s`)."""
    result, serve_cpu, node_cpu = _costed(
        serve,
        node_cpu_s,
        lambda: load(
            "recall", serve.url, "--clients", str(clients), "--requests", str(requests), *args
        ),
    )
    done = result["requests"]
    per_request = {
        "serve_cpu_ms_per_request": serve_cpu / done * 1000,
        "node_cpu_ms_per_request": node_cpu / done * 1000,
        "generator_cpu_ms_per_request": result["generator_cpu_s"] / done * 1000,
    }
    spent_s = sum(per_request.values()) / 1000
    cores = os.cpu_count() or 1
    return {**result, **per_request, "cpu_bound_requests_per_s": cores / spent_s}


def caught_up(serve: Serve, events: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Wait until `serve`'s enrichment has no event left (its `/readyz` lag): how long
    that took from now, and the lag now. A slow encoder takes hours for 1M events: the
    wait's bound is one event per 20 ms, and ten minutes more."""
    began = time.perf_counter()
    lag_at_start = _lag(serve)
    deadline = began + 600 + events * 0.02
    while (lag := _lag(serve)) != 0:
        if time.perf_counter() > deadline:
            raise RuntimeError(f"serve's enrichment still had {lag} events to do")
        time.sleep(1)
    seconds = time.perf_counter() - began
    log(f"  enrichment caught up {seconds:.0f} s after the load ({lag_at_start:,} events then)")
    rate = lag_at_start / seconds if lag_at_start and seconds else None
    return {"lag_after_load": lag_at_start, "seconds": seconds, "events_per_s": rate}


def _lag(serve: Serve) -> int | None:
    answer = httpx.get(f"{serve.url}/readyz", timeout=30).json()
    lag = answer.get("enrichment_pending")
    return None if lag is None else int(lag)


def library_recall(tool: BoundTool, query: str, calls: int) -> list[float]:
    """The latencies (ms) of the same tool call as the HTTP one, through the library in
    this process."""
    arguments = {"innerThought": "bench", "query": query}
    latencies = []
    for _ in range(calls):
        began = time.perf_counter()
        tool.render(tool.run(arguments))
        latencies.append((time.perf_counter() - began) * 1000)
    return latencies


def recall_side_by_side(
    client: Elasticsearch, serve: Serve, alias: str, user: str, query: str, calls: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One client's recall through the library and over HTTP, `calls` each, in
    alternating blocks (library first, then HTTP first, and so on), so that whatever
    the node does meanwhile (a merge, a cache warming) weighs on both alike. Each block
    starts with a call left out of the figures."""
    blocks = max(2, calls // RECALL_BLOCK)
    per_block = calls // blocks
    searchers = searchers_for(client, Settings(SESSION_RECALL_INDEX=alias))
    tool = cross_session_tool(searchers.cross_session(user_id=user))
    recall_args = ["--user", user, "--query", query, "--latencies"]
    library: list[float] = []
    http: list[float] = []

    def library_block() -> None:
        library.extend(library_recall(tool, query, per_block + 1)[1:])

    def http_block() -> None:
        answer = load("recall", serve.url, "--requests", str(per_block + 1), *recall_args)
        http.extend(answer["latencies_ms"][1:])

    for block in range(blocks):
        for run in (library_block, http_block) if block % 2 == 0 else (http_block, library_block):
            run()
    return (
        {"requests": len(library), "blocks": blocks, "p50_ms": percentile(library, 50)},
        {"requests": len(http), "blocks": blocks, "p50_ms": percentile(http, 50),
         "p95_ms": percentile(http, 95)},
    )  # fmt: skip


def measure(
    *,
    default: Configuration | None,
    stripped: Configuration,
    es_url: str,
    client: Elasticsearch,
    path: Path,
    events: int,
    home: Path,
    new_alias: Callable[[str], str],
    drop: Callable[[str], None],
    node_cpu_s: Callable[[], float],
    settle: Callable[[str, int], None],
    user: str,
    query: str,
    quick: bool,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """`default` (None: not at this size) takes 8 clients' batches, catches up with its
    enrichment, then answers single events and recall; `stripped` takes 8 and 32
    clients' batches. Single events and recall run on `stripped` when `default` is None."""
    report: dict[str, Any] = {}
    first = default or stripped
    alias = new_alias("serve-8-default" if default else "serve-8")
    with serving(es_url, alias, home, first) as serve:
        log(f"serve ({first.label}): {events:,} events in {BATCH}-event batches from 8 clients")
        key = "default_batches_8" if default else "batches_8"
        report[key] = _with(first, batches(serve, path, events, 8, node_cpu_s))
        log(f"  {report[key]['events_per_s']:,.0f} events/s")
        if default is not None and default.enrich:
            report["enrichment"] = caught_up(serve, events, log)
        settle(alias, events)
        log("serve: single events from 1 client")
        single = load("single", serve.url, "--requests", "50" if quick else "300")
        report["single_1"] = _with(first, single)
        log(f"  ack p50 {report['single_1']['p50_ms']:.1f} ms")
        calls = 50 if quick else 300
        library, http = recall_side_by_side(client, serve, alias, user, query, calls)
        report["recall_library_1"], report["recall_1"] = library, _with(first, http)
        recall_args = ["--user", user, "--query", query]
        report["recall_8"] = _with(
            first, recall_load(serve, node_cpu_s, 8, calls * 8, *recall_args)
        )
        log(
            f"  recall p50 {report['recall_1']['p50_ms']:.1f} ms over HTTP, "
            f"{report['recall_library_1']['p50_ms']:.1f} ms library; "
            f"{report['recall_8']['requests_per_s']:,.0f} requests/s with 8 clients "
            f"(the CPU it costs allows {report['recall_8']['cpu_bound_requests_per_s']:,.0f})"
        )
    drop(alias)
    for clients in (8, 32) if default else (32,):
        alias = new_alias(f"serve-{clients}")
        with serving(es_url, alias, home, stripped) as serve:
            log(f"serve ({stripped.label}): {events:,} events, {BATCH}-event batches, "
                f"{clients} clients")  # fmt: skip
            found = _with(stripped, batches(serve, path, events, clients, node_cpu_s))
            report[f"batches_{clients}"] = found
            log(f"  {found['events_per_s']:,.0f} events/s")
        drop(alias)
    return report


def _with(setup: Configuration, result: dict[str, Any]) -> dict[str, Any]:
    """A result, labelled with the configuration `serve` ran in."""
    return {**result, "configuration": setup.to_json()}
