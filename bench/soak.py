"""Soak: `serve` under mixed load for a while, through one node crash and one restart of
`serve` itself, then a count of what was acknowledged against what is stored.

    python -m bench.soak --minutes 30       # the real run
    python -m bench.soak --minutes 1        # a smoke run

It starts a local node of its own (`session-recall node`, named soak-<run id>, under
--home or SESSION_RECALL_HOME; wiped at the end unless --keep-node) and `serve` on a
free port, then runs producers (batches of fresh events, sent again after a 503 or a
lost connection until acknowledged) and recall clients (cross_session_search over
the same users) side by side. A third of the way in, the node is SIGKILLed and
started again (it keeps its port); two thirds in, `serve` is stopped (SIGTERM) and
started again on the same port. At the end every producer finishes its batch, and
the report gives:

- events acknowledged and stored (equal, and no event stored twice);
- recall p50/p99 of the answered searches, and how many got 503;
- the resident size of each `serve` process: after warm-up, at peak, at the end.

A summary goes to stdout and the whole report, as JSON, to --out (bench/out/ by
default). Nothing here is run by the test suite.
"""

import argparse
import itertools
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from elasticsearch import Elasticsearch

from bench.timing import percentile
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.node import LocalNode, wait_until
from session_recall.node.local_node import group_members
from session_recall.templates import install

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
ALIAS = "soak"
USERS = 50
WORDS = ("lisbon", "offsite", "venue", "budget", "flights", "invoice", "weather", "launch")
# RSS is sampled this often; "after warm-up" is the first sample past WARMUP_SHARE of a
# serve process's life (or WARMUP_MAX_S, whichever comes first). Warm-up includes the
# embedder's word cache filling up (32 MB at most; each event here brings a new word).
RSS_EVERY_S = 1.0
WARMUP_SHARE, WARMUP_MAX_S = 0.1, 120.0
# How long producers may keep retrying their last batch once the run is over.
DRAIN_S = 120.0
REQUEST_TIMEOUT_S = 60.0


@dataclass
class Tally:
    """What the clients saw; shared by their threads, under `lock`."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    acknowledged: list[str] = field(default_factory=list)
    event_503: int = 0
    event_lost: int = 0  # connection refused or reset (serve restarting)
    recall_ms: list[float] = field(default_factory=list)
    recall_503: int = 0
    recall_lost: int = 0
    other: dict[str, int] = field(default_factory=dict)

    def count_other(self, what: str) -> None:
        with self.lock:
            self.other[what] = self.other.get(what, 0) + 1


@dataclass
class Rss:
    """One serve process's resident size, in MiB."""

    samples: list[tuple[float, float]] = field(default_factory=list)  # (seconds, MiB)

    def summary(self) -> dict[str, float]:
        if not self.samples:
            return {}
        life = self.samples[-1][0]
        warm_at = min(life * WARMUP_SHARE, WARMUP_MAX_S)
        warm = next(mib for at, mib in self.samples if at >= warm_at)
        peak = max(mib for _, mib in self.samples)
        end = self.samples[-1][1]
        return {
            "after_warmup_mib": round(warm, 1),
            "peak_mib": round(peak, 1),
            "end_mib": round(end, 1),
            "growth_after_warmup_pct": round(100 * (end - warm) / warm, 1),
            "seconds": round(life, 1),
        }


class Serve:
    """`session-recall serve` as a process of its own, restartable on the same port."""

    def __init__(
        self,
        es_url: str,
        home: Path,
        port: int,
        log: Path,
        *,
        alias: str = ALIAS,
        env: dict[str, str] | None = None,
    ) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self._command = [
            sys.executable, "-c", "from session_recall.cli import main; main()",
            "--es-url", es_url, "--index", alias, "--home", str(home),
            "serve", "--port", str(port), "--log-level", "warning",
        ]  # fmt: skip
        self._log = log
        self._env = None if env is None else {**os.environ, **env}
        self.process: subprocess.Popen[bytes] | None = None
        self.rss: list[Rss] = []

    def start(self) -> None:
        with self._log.open("ab") as log:
            self.process = subprocess.Popen(
                self._command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self._env,
            )
        self.rss.append(Rss())
        if not wait_until(self.ready, timeout=120):
            raise SystemExit(f"serve did not become ready; see {self._log}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=120)

    def ready(self) -> bool:
        try:
            return httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    def sample(self, since: float) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        try:
            mib = psutil.Process(self.process.pid).memory_info().rss / 2**20
        except psutil.Error:
            return
        self.rss[-1].samples.append((time.monotonic() - since, mib))


def produce(url: str, run: str, batch: int, pause: float, stop: threading.Event, tally: Tally,
            ids: Iterator[int], ids_lock: threading.Lock) -> None:  # fmt: skip
    """Batches of fresh events; each sent again until acknowledged, so every event
    sent is acknowledged in the end (or the drain time ran out)."""
    with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
        while not stop.is_set():
            with ids_lock:
                numbers = [next(ids) for _ in range(batch)]
            events = [_event(run, n) for n in numbers]
            drain_until: float | None = None
            while True:
                if stop.is_set() and drain_until is None:
                    drain_until = time.monotonic() + DRAIN_S
                if drain_until is not None and time.monotonic() > drain_until:
                    return
                try:
                    response = client.post("/v1/events", json=events)
                except httpx.TransportError:
                    with tally.lock:
                        tally.event_lost += 1
                    time.sleep(0.5)
                    continue
                if response.status_code == 200:
                    with tally.lock:
                        tally.acknowledged += [e["event_id"] for e in events]
                    break
                if response.status_code == 503:
                    with tally.lock:
                        tally.event_503 += 1
                    time.sleep(min(float(response.headers.get("retry-after", 1)), 2.0))
                    continue
                tally.count_other(f"events {response.status_code}")
                return
            stop.wait(pause)


def recall(url: str, stop: threading.Event, tally: Tally, seed: int) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
        while not stop.is_set():
            user = f"u{rng.randrange(USERS)}"
            query = ", ".join(rng.sample(WORDS, 3))
            start = time.perf_counter()
            try:
                response = client.post(
                    f"/v1/users/{user}/tools/cross_session_search",
                    json={"innerThought": "soak", "query": query},
                )
            except httpx.TransportError:
                with tally.lock:
                    tally.recall_lost += 1
                stop.wait(0.5)
                continue
            took = (time.perf_counter() - start) * 1000
            with tally.lock:
                if response.status_code == 200:
                    tally.recall_ms.append(took)
                elif response.status_code == 503:
                    tally.recall_503 += 1
            if response.status_code == 503:  # as a client should: wait, then ask again
                stop.wait(min(float(response.headers.get("retry-after", 1)), 1.0))
            elif response.status_code != 200:
                tally.count_other(f"recall {response.status_code}")


def _event(run: str, n: int) -> dict[str, Any]:
    words = " ".join(random.sample(WORDS, 4))
    return {
        "event_id": f"{run}-{n}",
        "user_id": f"u{n % USERS}",
        "session_id": f"s{n % 500}",
        "timestamp": Instant.now().isoformat(),
        "type": "user_message",
        "text": f"message {n}: {words}",
    }


def kill_node(node: LocalNode) -> float:
    """SIGKILL the node's processes, start it again; the seconds it was away."""
    info = node.status()
    if info is None:
        raise SystemExit("the soak node is not running")
    start = time.monotonic()
    os.killpg(info.pgid, signal.SIGKILL)
    wait_until(lambda: not group_members(info.pgid), timeout=60)
    again = node.start(on_step=lambda _m: None)
    if again.url != info.url:
        raise SystemExit(f"the node came back at {again.url}, not {info.url}")
    return time.monotonic() - start


def stored_count(es: Elasticsearch, acknowledged: list[str]) -> tuple[int, int]:
    """(documents in the alias, acknowledged events found among them)."""
    es.indices.refresh(index=ALIAS)
    total = int(es.count(index=ALIAS)["count"])
    found = 0
    for start in range(0, len(acknowledged), 10_000):
        ids = acknowledged[start : start + 10_000]
        found += int(es.count(index=ALIAS, query={"terms": {"event_id": ids}})["count"])
    return total, found


@contextmanager
def soak_node(home: Path, name: str, keep: bool) -> Iterator[LocalNode]:
    node = LocalNode(home=home, name=name)
    try:
        yield node
    finally:
        if keep:
            node.stop()
        else:
            node.wipe()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--producers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=50, help="events per request")
    parser.add_argument(
        "--pause", type=float, default=0.05, help="seconds between a producer's batches"
    )
    parser.add_argument("--recall-clients", type=int, default=4)
    parser.add_argument("--home", type=Path, default=None, help="local state (the node's files)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--keep-node", action="store_true")
    args = parser.parse_args(argv)

    run = f"soak-{uuid.uuid4().hex[:6]}"
    home = args.home or Settings().home
    args.out.mkdir(parents=True, exist_ok=True)
    duration = args.minutes * 60
    tally, stop = Tally(), threading.Event()
    timeline: dict[str, float] = {}
    with soak_node(home, run, args.keep_node) as node:
        info = node.start(on_step=lambda m: print(m, file=sys.stderr))
        es = make_client(Settings(ELASTICSEARCH_URL=info.url))
        install(es, ALIAS)
        serve = Serve(info.url, home, free_port(), args.out / f"{run}-serve.log")
        serve.start()
        began = time.monotonic()
        serve_began = began
        ids, ids_lock = itertools.count(), threading.Lock()
        threads = [
            threading.Thread(
                target=produce,
                args=(serve.url, run, args.batch, args.pause, stop, tally, ids, ids_lock),
            )
            for _ in range(args.producers)
        ] + [
            threading.Thread(target=recall, args=(serve.url, stop, tally, seed))
            for seed in range(args.recall_clients)
        ]
        for thread in threads:
            thread.start()
        node_killed = serve_restarted = False
        try:
            while (elapsed := time.monotonic() - began) < duration:
                serve.sample(serve_began)
                if not node_killed and elapsed >= duration / 3:
                    print(f"[{elapsed:.0f}s] killing the node", file=sys.stderr)
                    timeline["node_killed_at_s"] = round(elapsed, 1)
                    timeline["node_away_s"] = round(kill_node(node), 1)
                    node_killed = True
                elif not serve_restarted and elapsed >= 2 * duration / 3:
                    print(f"[{elapsed:.0f}s] restarting serve", file=sys.stderr)
                    timeline["serve_restarted_at_s"] = round(elapsed, 1)
                    restart = time.monotonic()
                    serve.stop()
                    serve.start()
                    serve_began = time.monotonic()
                    timeline["serve_away_s"] = round(serve_began - restart, 1)
                    serve_restarted = True
                time.sleep(RSS_EVERY_S)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=DRAIN_S + REQUEST_TIMEOUT_S)
            serve.sample(serve_began)
            serve.stop()
        total, found = stored_count(es, tally.acknowledged)
        es.close()

    acknowledged = len(tally.acknowledged)
    report = {
        "run": run,
        "minutes": args.minutes,
        "producers": args.producers,
        "batch": args.batch,
        "recall_clients": args.recall_clients,
        "timeline": timeline,
        "events": {
            "acknowledged": acknowledged,
            "acknowledged_unique": len(set(tally.acknowledged)),
            "stored": total,
            "acknowledged_found": found,
            "answered_503": tally.event_503,
            "connection_lost": tally.event_lost,
        },
        "recall": {
            "answered": len(tally.recall_ms),
            "p50_ms": round(percentile(tally.recall_ms, 50), 1) if tally.recall_ms else None,
            "p99_ms": round(percentile(tally.recall_ms, 99), 1) if tally.recall_ms else None,
            "answered_503": tally.recall_503,
            "connection_lost": tally.recall_lost,
        },
        "other_answers": tally.other,
        "serve_rss": [asdict(r) | r.summary() for r in serve.rss],
    }
    for entry in report["serve_rss"]:
        entry.pop("samples")
    path = args.out / f"{run}.json"
    path.write_text(json.dumps(report, indent=2), encoding="utf-8")
    exact = total == found == acknowledged == len(set(tally.acknowledged))
    print(_summary(report, exact))
    print(f"report: {path}")
    return 0 if exact and not tally.other else 1


def free_port() -> int:
    """A port nothing listens on right now, on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _summary(report: dict[str, Any], exact: bool) -> str:
    events, recall_ = report["events"], report["recall"]
    lines = [
        f"{report['run']}: {report['minutes']} min, {report['producers']} producers x "
        f"{report['batch']} events, {report['recall_clients']} recall clients",
        f"timeline: {report['timeline']}",
        f"events: {events['acknowledged']} acknowledged, {events['stored']} stored, "
        f"{events['acknowledged_found']} of the acknowledged found "
        f"({'exact, no duplicates' if exact else 'MISMATCH'}); "
        f"{events['answered_503']} answers 503, {events['connection_lost']} connections lost",
        f"recall: {recall_['answered']} answered, p50 {recall_['p50_ms']} ms, "
        f"p99 {recall_['p99_ms']} ms; {recall_['answered_503']} answers 503, "
        f"{recall_['connection_lost']} connections lost",
    ]
    for i, rss in enumerate(report["serve_rss"], 1):
        lines.append(
            f"serve #{i} RSS: {rss.get('after_warmup_mib')} MiB after warm-up, peak "
            f"{rss.get('peak_mib')}, end {rss.get('end_mib')} "
            f"({rss.get('growth_after_warmup_pct')}% over {rss.get('seconds')} s)"
        )
    if report["other_answers"]:
        lines.append(f"unexpected answers: {report['other_answers']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
