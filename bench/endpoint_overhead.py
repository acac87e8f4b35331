"""What the endpoint embedder adds to a query's embedding, over the server's own time.

    python -m bench.endpoint_overhead [--calls 300] [--model-ms 25]
    python -m bench.endpoint_overhead --enrichment 10000 [--model-ms 25]   # ELASTICSEARCH_URL

An OpenAI-compatible `/v1/embeddings` server runs in a process of its own (uvicorn on
127.0.0.1), standing in for a model that takes `--model-ms` per request (it waits that
long, then answers a fixed vector), and records how long it spent on each request,
from the request's arrival to its answer. `EndpointEmbedder.embed_query` is then timed
from Python, one question at a time, as memory_search asks. The report gives the p50
of both and their difference: the client's overhead (connection, JSON, checks).

With `--enrichment N`, `bench.generate`'s first N events are stored in an alias of
their own on the node at `ELASTICSEARCH_URL` (dropped afterwards), and one enrichment
pass gives them stems, context and the server's vectors (64 texts a request). The report
gives the pass's rate and the time the server spent: a pass that embedded a page only
after writing the one before would take the server's time plus Elasticsearch's.
"""

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence

import httpx

_DIMS = 64
_READY_S = 30.0


def serve(port: int, model_ms: float) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    spent: list[float] = []

    async def embeddings(request: Request) -> JSONResponse:
        begin = time.perf_counter()
        body = await request.json()
        await asyncio.sleep(model_ms / 1000)
        data = [
            {"object": "embedding", "index": i, "embedding": [0.125] * _DIMS}
            for i, _ in enumerate(body["input"])
        ]
        answer = JSONResponse({"object": "list", "data": data, "model": body["model"]})
        spent.append((time.perf_counter() - begin) * 1000)
        return answer

    async def stats(_request: Request) -> JSONResponse:
        return JSONResponse({"spent_ms": spent})

    routes = [
        Route("/v1/embeddings", embeddings, methods=["POST"]),
        Route("/stats", stats, methods=["GET"]),
    ]
    uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=port, log_level="error")


def measure(calls: int, model_ms: float) -> dict[str, float]:
    from session_recall.embeddings.endpoint import EndpointEmbedder

    with _server(model_ms) as base:
        embedder = EndpointEmbedder(url=f"{base}/v1", model="bench", dims=_DIMS)
        for _ in range(10):  # untimed: the connection, the first requests
            embedder.embed_query("warm up")
        httpx.get(f"{base}/stats")  # the server's count starts after the warm-up
        before = len(httpx.get(f"{base}/stats").json()["spent_ms"])
        took = []
        for i in range(calls):
            begin = time.perf_counter()
            embedder.embed_query(f"what did we decide about the budget, question {i}?")
            took.append((time.perf_counter() - begin) * 1000)
        spent = httpx.get(f"{base}/stats").json()["spent_ms"][before:]
        embedder.close()
    client, own = statistics.median(took), statistics.median(spent)
    return {"calls": calls, "client_p50_ms": client, "server_p50_ms": own, "added_ms": client - own}


def measure_enrichment(events: int, model_ms: float, es_url: str) -> dict[str, float]:
    import itertools

    from bench import generate
    from session_recall.client import make_client
    from session_recall.config import Settings
    from session_recall.embeddings.endpoint import EndpointEmbedder
    from session_recall.indexer import Event, Submission, Writer, enrich
    from session_recall.templates import install, uninstall

    client = make_client(Settings(ELASTICSEARCH_URL=es_url))
    alias = f"bench-endpoint-enrichment-p{os.getpid()}"  # no dash before a digit
    install(client, alias)
    try:
        stored = Writer(client, alias).write(
            Submission(Event.model_validate(event))
            for event in itertools.islice(generate.events(events), events)
        )
        if not all(written.result.stored for written in stored):
            raise RuntimeError("the node refused some of the generated events")
        client.indices.refresh(index=alias)
        with _server(model_ms) as base:
            embedder = EndpointEmbedder(url=f"{base}/v1", model="bench", dims=_DIMS)
            begin = time.perf_counter()
            summary = enrich(client, alias, embedder)
            seconds = time.perf_counter() - begin
            spent = sum(httpx.get(f"{base}/stats").json()["spent_ms"]) / 1000
            embedder.close()
    finally:
        uninstall(client, alias)
    return {"events": summary.enriched, "seconds": seconds, "server_s": spent}


@contextlib.contextmanager
def _server(model_ms: float) -> Iterator[str]:
    """The stand-in server in a process of its own, answering: its base URL."""
    port = _free_port()
    command = [sys.executable, "-m", "bench.endpoint_overhead", "--serve", str(port)]
    server = subprocess.Popen([*command, "--model-ms", str(model_ms)], env=os.environ.copy())
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_ready(f"{base}/stats")
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_ready(url: str) -> None:
    deadline = time.monotonic() + _READY_S
    while True:
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the bench server did not answer at {url}") from None
            time.sleep(0.05)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.endpoint_overhead", description=__doc__)
    parser.add_argument("--calls", type=int, default=300, help="Timed queries.")
    parser.add_argument("--model-ms", type=float, default=25.0, help="The server's time.")
    parser.add_argument(
        "--enrichment", type=int, metavar="N", help="Time an enrichment pass over N events."
    )
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.model_ms)
        return 0
    if args.enrichment is not None:
        if args.enrichment < 1:
            parser.error("--enrichment: at least 1 event")
        es_url = os.environ.get("ELASTICSEARCH_URL")
        if not es_url:
            parser.error(
                "--enrichment: set ELASTICSEARCH_URL first, e.g. export "
                "ELASTICSEARCH_URL=$(session-recall node start | tail -n1)"
            )
        run = measure_enrichment(args.enrichment, args.model_ms, es_url)
        print(
            f"enrichment pass: {run['events']:,.0f} events in {run['seconds']:.1f} s "
            f"({run['events'] / run['seconds']:,.0f} events/s); the server's time "
            f"{run['server_s']:.1f} s ({args.model_ms:g} ms a request of 64 texts)"
        )
        return 0
    if args.calls < 1:
        parser.error("--calls: at least 1")
    figures = measure(args.calls, args.model_ms)
    print(
        f"{figures['calls']} queries: client p50 {figures['client_p50_ms']:.2f} ms, "
        f"server p50 {figures['server_p50_ms']:.2f} ms, "
        f"added by the client {figures['added_ms']:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
