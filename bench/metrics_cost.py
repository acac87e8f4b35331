"""The cost of metrics on `serve`'s ingest and recall paths: two `serve` processes on the
same alias and node, one with metrics (the default) and one with `--no-metrics`,
driven in alternating blocks, so that both meet the same node at the same moments.

For each path and each process: the p50 of a request's latency as the client sees it,
and `serve`'s own CPU per request (from its process's CPU times over the blocks), the
figure least moved by the node and the machine's other load. The cost is the relative
difference, on over off.

    python -m bench.metrics_cost                              # 100,000 events, 4,000 recalls
    python -m bench.metrics_cost --events 2000 --recalls 200  # a quick try
    python -m bench.metrics_cost --traces                     # and a third with traces

With `--traces`, a third `serve` (metrics on) sends a span per request to an OTLP
receiver in this process that takes and drops them: the cost of traces against the
one with metrics alone, which has none (nothing of OpenTelemetry is configured).

Needs ELASTICSEARCH_URL; makes and drops an alias of its own.
"""

import argparse
import contextlib
import http.server
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import psutil

from bench import alias_name, sections
from bench.machine import describe
from bench.soak import Serve, free_port
from bench.timing import percentile
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.templates import install, uninstall

BATCH = 100  # events per POST, as a producer batches them
BLOCK = 20  # requests to one process before the other takes its turn
USERS = 50
WORDS = ("venue", "budget", "flight", "lisbon", "contract", "invoice", "agenda", "hotel")


def _events(start: int, count: int) -> bytes:
    lines = []
    for i in range(start, start + count):
        seconds, nanos = divmod(i, 1000)
        lines.append(
            orjson.dumps(
                {
                    "event_id": f"m-{i}",
                    "user_id": f"user-{i % USERS}",
                    "session_id": f"s-{i // 200}",
                    "timestamp": f"2026-07-01T{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}"
                    f":{seconds % 60:02d}.{nanos:03d}000001Z",
                    "type": "user_message" if i % 2 else "assistant_message",
                    "text": f"{WORDS[i % len(WORDS)]} {WORDS[i * 7 % len(WORDS)]} note {i}",
                }
            )
        )
    return b"\n".join(lines) + b"\n"


class Side:
    """One `serve` and what its requests cost."""

    def __init__(self, name: str, serve: Serve) -> None:
        self.name = name
        self.serve = serve
        self.client = httpx.Client(base_url=serve.url, timeout=60)
        assert serve.process is not None
        self._process = psutil.Process(serve.process.pid)
        self.latencies: list[float] = []
        self.cpu = 0.0
        self.requests = 0

    def block(self, requests: list["Request"]) -> None:
        before = self._cpu()
        for request in requests:
            started = time.perf_counter()
            answer = request(self.client)
            self.latencies.append(time.perf_counter() - started)
            if answer.status_code != 200:
                raise SystemExit(f"{self.name}: {answer.status_code} {answer.text[:300]}")
        self.cpu += self._cpu() - before
        self.requests += len(requests)

    def _cpu(self) -> float:
        times = self._process.cpu_times()
        return float(times.user + times.system)

    def figures(self) -> dict[str, float]:
        return {
            "p50_ms": percentile(self.latencies, 50) * 1000,
            "cpu_ms_per_request": self.cpu / max(self.requests, 1) * 1000,
        }

    def reset(self) -> None:
        self.latencies, self.cpu, self.requests = [], 0.0, 0


Request = Callable[[httpx.Client], httpx.Response]
NDJSON = {"content-type": "application/x-ndjson"}


def _store(body: bytes) -> Request:
    return lambda client: client.post("/v1/events", content=body, headers=NDJSON)


def _alternate(sides: list[Side], requests: list[list[Request]]) -> None:
    """A block of each side's requests to each side in turn, the first side changing
    every round (neither always follows the other's block)."""
    for round_, start in enumerate(range(0, len(requests[0]), BLOCK)):
        order = list(zip(sides, requests, strict=True))
        for side, mine in order if round_ % 2 == 0 else order[::-1]:
            side.block(mine[start : start + BLOCK])


def _compare(sides: list[Side]) -> dict[str, Any]:
    """Each side's figures, and the cost of metrics (on over off) and, when measured,
    of traces (traces over on)."""
    figures = {side.name: side.figures() for side in sides}
    compared: dict[str, Any] = dict(figures)
    pairs = [("metrics", "on", "off"), ("traces", "traces", "on")]
    for what, more, less in pairs:
        if more not in figures:
            continue
        for figure, key in (("p50_ms", "p50"), ("cpu_ms_per_request", "cpu")):
            compared[f"cost_{what}_{key}_pct"] = _pct(figures[more][figure], figures[less][figure])
    return compared


def _pct(more: float, less: float) -> float:
    return (more / less - 1) * 100 if less else float("nan")


class _Sink(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that takes every export and keeps nothing but their count."""

    exports = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        _Sink.exports += 1
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


@contextlib.contextmanager
def _otlp_sink() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def run(es_url: str, *, events: int, recalls: int, traces: bool = False) -> dict[str, Any]:
    with _otlp_sink() as endpoint:
        figures = _run(es_url, events=events, recalls=recalls, traces=endpoint if traces else None)
    if traces:
        figures["otlp_exports"] = _Sink.exports  # none would mean no trace was sent
    return figures


def _run(es_url: str, *, events: int, recalls: int, traces: str | None) -> dict[str, Any]:
    alias = alias_name("metrics", uuid.uuid4().hex[:8])
    settings = Settings(ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=alias)
    es = make_client(settings)
    install(es, alias)
    home = Path(tempfile.mkdtemp(prefix="metrics-cost-"))
    # No embedder and no enrichment: the paths measured are storing and searching.
    common = {"SESSION_RECALL_EMBEDDER": "none", "SESSION_RECALL_ENRICH": "false"}
    variants = [("on", common), ("off", {**common, "SESSION_RECALL_METRICS": "false"})]
    if traces is not None:
        variants.append(("traces", {**common, "OTEL_EXPORTER_OTLP_ENDPOINT": traces}))
    serves = [
        Serve(es_url, home, free_port(), home / f"{name}.log", alias=alias, env=env)
        for name, env in variants
    ]
    try:
        for serve in serves:
            serve.start()
        sides = [Side(name, serve) for (name, _), serve in zip(variants, serves, strict=True)]
        # Each side stores events of its own (the same shapes): a replay costs less.
        posts = events // BATCH
        stores = [
            [_store(_events((side * posts + i) * BATCH, BATCH)) for i in range(posts)]
            for side in range(len(sides))
        ]
        _alternate(sides, stores)
        ingest = _compare(sides)
        es.indices.refresh(index=alias)
        for side in sides:
            side.reset()
        searches = [
            lambda c, i=i: c.post(
                f"/v1/users/user-{i % USERS}/tools/cross_session_search",
                json={"innerThought": "recap", "query": WORDS[i % len(WORDS)]},
            )
            for i in range(recalls)
        ]
        _alternate(sides, [searches] * len(sides))
        recall = _compare(sides)
    finally:
        for serve in serves:
            serve.stop()
        uninstall(es, alias)
        es.close()
    shutil.rmtree(home)  # kept when a serve failed: its log is there
    return {"events": events, "recalls": recalls, "ingest": ingest, "recall": recall}


START = "<!-- metrics cost: from python -m bench.metrics_cost, its command below -->"
END = "<!-- /metrics cost -->"


def kept_section(document: str) -> str | None:
    return sections.kept(document, start=START, end=END)


def replace_section(document: str, text: str) -> str:
    return sections.replace(document, text, start=START, end=END)


def section(figures: dict[str, Any], command: str, machine: dict[str, Any]) -> str:
    """The report's section: each path's p50 and serve's CPU per request, on and off."""
    rows = []
    for path, unit in (("ingest", "a POST of 100 events"), ("recall", "a cross_session_search")):
        found = figures[path]
        for side in ("off", "on", "traces"):
            if side in found:
                got = found[side]
                rows.append(
                    f"| {path} ({unit}) | {side} | {got['p50_ms']:.2f} | "
                    f"{got['cpu_ms_per_request']:.3f} |"
                )
    costs = [
        f"{path}: p50 {figures[path]['cost_metrics_p50_pct']:+.1f}%, serve's CPU "
        f"{figures[path]['cost_metrics_cpu_pct']:+.1f}%"
        for path in ("ingest", "recall")
    ]
    return "\n".join([
        START,
        "## The cost of metrics",
        "",
        f"`{command}`, one run on {machine['date']}: two `serve` processes on one alias, "
        "metrics on (the default) and off (`--no-metrics`), driven in alternating blocks; "
        f"{figures['events']:,} events stored and {figures['recalls']:,} recalls each side, "
        "no embedder and no enrichment (the paths measured are storing and searching).",
        "",
        "| path | metrics | p50 ms | serve's CPU ms per request |",
        "| --- | --- | ---: | ---: |",
        *rows,
        "",
        "The cost of metrics, on over off: " + "; ".join(costs) + ".",
        END,
        "",
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--recalls", type=int, default=4_000)
    parser.add_argument("--traces", action="store_true", help="Add a serve with traces.")
    parser.add_argument("--report", type=Path, default=Path("BENCHMARKS.md"))
    parser.add_argument("--no-report", action="store_true", help="Print the figures only.")
    args = parser.parse_args(argv)
    es_url = os.environ.get("ELASTICSEARCH_URL")
    if not es_url:
        raise SystemExit("Set ELASTICSEARCH_URL to the node to measure against.")
    figures = run(es_url, events=args.events, recalls=args.recalls, traces=args.traces)
    print(json.dumps(figures, indent=2))
    if not args.no_report:
        given = argv if argv is not None else sys.argv[1:]
        command = " ".join(["python -m bench.metrics_cost", *given])
        client = make_client(Settings(ELASTICSEARCH_URL=es_url))
        text = section(figures, command, describe(client))
        report = args.report.read_text(encoding="utf-8") if args.report.exists() else ""
        args.report.write_text(replace_section(report, text), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
