"""The load generator of the serve benchmark, run as a process of its own so that its
CPU is neither `serve`'s nor the benchmark's, and reported.

    python -m bench.serve_load batches URL --file F --clients 8 --batch 100
    python -m bench.serve_load single URL --requests 200
    python -m bench.serve_load recall URL --clients 8 --requests 2000 --user U --query Q
    python -m bench.serve_load recall URL --requests 50 --user U --query Q --latencies

Prints one JSON object: what was sent, how fast, the latencies' p50/p95 in ms, and the
generator's own CPU seconds. Batches are read from the file as NDJSON bodies and sent
as they are (no JSON work here), over `http.client` keep-alive connections (a lighter
client leaves more of the machine to what is measured); every request must be
answered 200.
"""

import argparse
import http.client
import itertools
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from bench.machine import own_cpu_s
from bench.timing import percentile

TIMEOUT_S = 120


def _bodies(path: str, batch: int) -> Iterator[tuple[bytes, int]]:
    with open(path, "rb") as lines:
        while chunk := list(itertools.islice(lines, batch)):
            yield b"".join(chunk), len(chunk)


def _drive(
    url: str,
    clients: int,
    next_request: Callable[[], tuple[str, bytes, str, int] | None],
    *,
    keep_latencies: bool = False,
) -> dict[str, Any]:
    """Each client thread sends what `next_request` gives until it gives None; every
    answer must be 200. Returns counts, latencies' percentiles (and each latency, with
    `keep_latencies`) and the generator's CPU."""
    latencies: list[float] = []
    failures: list[str] = []
    counted = [0]
    lock = threading.Lock()

    target = urlsplit(url)

    def client() -> None:
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=TIMEOUT_S)
        try:
            while True:
                with lock:
                    request = next_request()
                if request is None or failures:
                    return
                path, body, kind, units = request
                began = time.perf_counter()
                connection.request("POST", path, body=body, headers={"content-type": kind})
                response = connection.getresponse()
                answer = response.read()
                took = (time.perf_counter() - began) * 1000
                with lock:
                    if response.status != 200:
                        failures.append(f"{response.status}: {answer[:300]!r}")
                    latencies.append(took)
                    counted[0] += units
        finally:
            connection.close()

    cpu, began = own_cpu_s(), time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    if failures:
        raise SystemExit(f"{len(failures)} request(s) failed; the first: {failures[0]}")
    return {
        "clients": clients,
        "requests": len(latencies),
        "units": counted[0],
        "seconds": seconds,
        "units_per_s": counted[0] / seconds,
        "requests_per_s": len(latencies) / seconds,
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "generator_cpu_s": own_cpu_s() - cpu,
        **({"latencies_ms": latencies} if keep_latencies else {}),
    }


def batches(url: str, path: str, clients: int, batch: int) -> dict[str, Any]:
    bodies = _bodies(path, batch)

    def next_request() -> tuple[str, bytes, str, int] | None:
        body = next(bodies, None)
        return None if body is None else ("/v1/events", body[0], "application/x-ndjson", body[1])

    return _drive(url, clients, next_request)


def single(url: str, requests: int, run: str) -> dict[str, Any]:
    numbers = iter(range(requests))

    def next_request() -> tuple[str, bytes, str, int] | None:
        n = next(numbers, None)
        if n is None:
            return None
        event = {
            "event_id": f"{run}-{n}",
            "user_id": f"single-{run}",
            "session_id": "s1",
            "timestamp": "2026-07-01T12:00:00Z",
            "type": "user_message",
            "text": f"single event {n}",
        }
        return "/v1/events", json.dumps(event).encode(), "application/json", 1

    return _drive(url, 1, next_request)


def recall(
    url: str, clients: int, requests: int, user: str, query: str, *, keep_latencies: bool = False
) -> dict[str, Any]:
    path = f"/v1/users/{user}/tools/cross_session_search"
    body = json.dumps({"innerThought": "bench", "query": query}).encode()
    left = iter(range(requests))

    def next_request() -> tuple[str, bytes, str, int] | None:
        return None if next(left, None) is None else (path, body, "application/json", 1)

    return _drive(url, clients, next_request, keep_latencies=keep_latencies)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["batches", "single", "recall"])
    parser.add_argument("url")
    parser.add_argument("--file")
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--user", default="")
    parser.add_argument("--query", default="")
    parser.add_argument("--run", default="bench")
    parser.add_argument("--latencies", action="store_true", help="recall: print each latency")
    args = parser.parse_args(argv)
    if args.mode == "batches":
        result = batches(args.url, args.file, args.clients, args.batch)
    elif args.mode == "single":
        result = single(args.url, args.requests, args.run)
    else:
        result = recall(
            args.url, args.clients, args.requests, args.user, args.query,
            keep_latencies=args.latencies,
        )  # fmt: skip
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
