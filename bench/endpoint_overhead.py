"""What the endpoint embedder adds to a query's embedding, over the server's own time.

    python -m bench.endpoint_overhead [--calls 300] [--model-ms 25]

An OpenAI-compatible `/v1/embeddings` server runs in a process of its own (uvicorn on
127.0.0.1), standing in for a model that takes `--model-ms` per request (it waits that
long, then answers a fixed vector), and records how long it spent on each request,
from the request's arrival to its answer. `EndpointEmbedder.embed_query` is then timed
from Python, one question at a time, as memory_search asks. The report gives the p50
of both and their difference: the client's overhead (connection, JSON, checks).
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

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

    port = _free_port()
    command = [sys.executable, "-m", "bench.endpoint_overhead", "--serve", str(port)]
    server = subprocess.Popen([*command, "--model-ms", str(model_ms)], env=os.environ.copy())
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_ready(f"{base}/stats")
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
    finally:
        server.terminate()
        server.wait(timeout=30)
    client, own = statistics.median(took), statistics.median(spent)
    return {"calls": calls, "client_p50_ms": client, "server_p50_ms": own, "added_ms": client - own}


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
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.model_ms)
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
