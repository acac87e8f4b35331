"""A local OpenAI-compatible embeddings server, for the endpoint embedder's tests.

`POST /v1/embeddings` answers as OpenAI does, with the static embedder's vectors. The
test steers it: `fail_next` answers that many requests with 503, `status` answers
every request with that status, `dims` cuts the vectors to that size,
`max_input_chars` refuses (400) a request holding a longer input; `batches` records
how many inputs each request carried. It listens on 127.0.0.1 only, runs
uvicorn in a thread, and `stop()` closes the port: a real "endpoint down".
"""

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from session_recall.embeddings import StaticEmbedder
from tests.support.network import free_port

MODEL = "static-test-model"
DIMS = 256
_START_S = 30


@dataclass
class Controls:
    fail_next: int = 0
    status: int | None = None
    dims: int = DIMS
    batches: list[int] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)  # every text received, in order
    # Refuse (400, as OpenAI's API does) a request with an input longer than this.
    max_input_chars: int | None = None


class EmbeddingsServer:
    def __init__(self) -> None:
        self.controls = Controls()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._embedder = StaticEmbedder(DIMS)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def _app(self) -> Starlette:
        async def embeddings(request: Request) -> JSONResponse:
            controls = self.controls
            if controls.status is not None:
                return JSONResponse({"error": {"message": "refused"}}, status_code=controls.status)
            if controls.fail_next > 0:
                controls.fail_next -= 1
                return JSONResponse({"error": {"message": "overloaded"}}, status_code=503)
            body: dict[str, Any] = await request.json()
            inputs = body["input"]
            limit = controls.max_input_chars
            if limit is not None and any(len(text) > limit for text in inputs):
                message = f"This model's maximum context length is {limit} characters."
                return JSONResponse({"error": {"message": message}}, status_code=400)
            controls.batches.append(len(inputs))
            controls.inputs.extend(inputs)
            vectors = self._embedder.embed(inputs)
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": [0.0] * controls.dims
                    if vector is None
                    else [float(x) for x in vector[: controls.dims]],
                }
                for i, vector in enumerate(vectors)
            ]
            return JSONResponse({"object": "list", "data": data, "model": body["model"]})

        return Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])

    def start(self) -> "EmbeddingsServer":
        config = uvicorn.Config(self._app(), host="127.0.0.1", port=self.port, log_level="error")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + _START_S
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the embeddings server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=_START_S)
            self._server = self._thread = None
