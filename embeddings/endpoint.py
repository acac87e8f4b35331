"""An OpenAI-compatible embeddings endpoint (`POST {url}/embeddings`): Ollama, vLLM,
TEI, llama.cpp, OpenAI and others speak it.

Texts go in batches; a batch that fails for a reason that may pass (no connection,
a timeout, 429 or 5xx) is sent again after a backoff, up to `max_attempts` times.
Every answer is checked: one vector per text, each of `dims` floats. After a batch
fails for good, the embedder stays `paused_s` seconds without trying, and says it is
unavailable at once: an ingest during an outage then stores its events without
vectors at full speed, instead of waiting out the retries of every chunk.
"""

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from session_recall.core.digest import digest
from session_recall.embeddings.embedder import Vector
from session_recall.embeddings.errors import (
    DimensionMismatch,
    EmbedderRefused,
    EmbedderUnavailable,
    EmbeddingError,
)
from session_recall.embeddings.pooled_http import PooledHttp

log = logging.getLogger(__name__)

# Most servers take a few hundred inputs a request; 64 keeps each request small enough
# that a retry resends little and a slow server answers within the timeout.
DEFAULT_BATCH = 64
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_ATTEMPTS = 3
DEFAULT_PAUSE_S = 30.0
# Texts are cut to this many characters before they are sent: about 2,000 tokens of
# English, inside the input limit of most served models (a tool's output of megabytes
# would be refused whole). A model with a smaller limit is given its own.
DEFAULT_MAX_CHARS = 8_000
# Statuses that refuse what was sent rather than who sent it.
_REFUSES_TEXTS = frozenset({400, 413, 422})
_BACKOFF_S = (0.2, 1.0)


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


class EndpointEmbedder(PooledHttp):
    """Vectors from an OpenAI-compatible `/embeddings` endpoint. Thread-safe."""

    def __init__(
        self,
        *,
        url: str,
        model: str,
        dims: int,
        api_key: str | None = None,
        batch_size: int = DEFAULT_BATCH,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_attempts: int = DEFAULT_ATTEMPTS,
        paused_s: float = DEFAULT_PAUSE_S,
        max_chars: int = DEFAULT_MAX_CHARS,
        budget_s: float | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if dims < 1 or batch_size < 1 or max_attempts < 1 or max_chars < 1:
            raise ValueError("dims, batch_size, max_attempts and max_chars must be positive")
        self._max_chars = max_chars
        # A batch's tries, the pauses between them included, end within this (a caller's
        # deadline: an adapter's store); none: `max_attempts` tries of `timeout_s` each.
        self._budget_s = budget_s  # for one call of `embed`, its batches together
        base = url.rstrip("/")
        self._url = base if base.endswith("/embeddings") else f"{base}/embeddings"
        self._model = model
        self._dims = dims
        # Models trained on asymmetric pairs (e5: "query: " and "passage: ") embed a
        # question and a stored text each with its own prefix.
        self._query_prefix, self._passage_prefix = query_prefix, passage_prefix
        self._batch = batch_size
        self._attempts = max_attempts
        self._paused_s = paused_s
        self._sleep = sleep
        self._clock = clock
        self._paused_until = 0.0
        self._lock = threading.Lock()
        # One client for the embedder's life (`PooledHttp`).
        self._open_http(timeout_s=timeout_s, api_key=api_key, transport=transport)

    @property
    def model_id(self) -> str:
        # The same model can be served at several sizes (OpenAI's `dimensions`): the
        # size is part of what the vectors are, and so is a stored text's prefix.
        base = f"{self._model}@{self._dims}"
        return f"{base}+{digest(self._passage_prefix)[:8]}" if self._passage_prefix else base

    @property
    def dims(self) -> int:
        return self._dims

    def embed(self, texts: Sequence[str]) -> list[Vector | None]:
        """Stored texts' vectors, each text after the passage prefix."""
        return self._embed(texts, self._passage_prefix)

    def embed_query(self, text: str) -> Vector | None:
        """A question's vector, after the query prefix."""
        [vector] = self._embed([text], self._query_prefix)
        return vector

    def _embed(self, texts: Sequence[str], prefix: str) -> list[Vector | None]:
        # Servers refuse empty inputs; a blank text has nothing to embed anyway.
        wanted = [i for i, text in enumerate(texts) if text.strip()]
        vectors: list[Vector | None] = [None] * len(texts)
        ends = None if self._budget_s is None else self._clock() + self._budget_s
        for start in range(0, len(wanted), self._batch):
            batch = wanted[start : start + self._batch]
            cut = [prefix + texts[i][: self._max_chars] for i in batch]
            embedded = self._embed_batch(self._http, cut, ends)
            for i, vector in zip(batch, embedded, strict=True):
                vectors[i] = vector
        return vectors

    def _embed_batch(
        self, http: httpx.Client, texts: list[str], ends: float | None
    ) -> list[Vector | None]:
        with self._lock:
            if self._clock() < self._paused_until:
                raise EmbedderUnavailable(
                    f"The embeddings endpoint {self._url} failed moments ago; not retrying yet.",
                    hint="Check that it runs; events are stored without vectors meanwhile.",
                )
        try:
            return self._parse(self._post(http, texts, ends), len(texts))
        except EmbedderUnavailable:
            with self._lock:
                self._paused_until = self._clock() + self._paused_s
            raise

    def _post(self, http: httpx.Client, texts: list[str], ends: float | None) -> Any:
        body = {"model": self._model, "input": texts, "encoding_format": "float"}
        cause = ""
        for attempt in range(self._attempts):
            if attempt:
                pause = random.uniform(*_BACKOFF_S) * 2 ** (attempt - 1)
                if ends is not None and self._clock() + pause >= ends:
                    break
                self._sleep(pause)
            left = None if ends is None else ends - self._clock()
            if left is not None and left <= 0:
                break
            try:
                response = http.post(self._url, json=body, timeout=left or httpx.USE_CLIENT_DEFAULT)
            except httpx.HTTPError as err:  # no connection, a timeout, a broken answer
                cause = type(err).__name__
                continue
            if _retryable(response.status_code):
                cause = f"status {response.status_code}"
                continue
            if response.status_code >= 400:
                status = response.status_code
                of_texts = status in _REFUSES_TEXTS
                raise EmbedderRefused(
                    f"The embeddings endpoint refused the request ({status}): "
                    f"{response.text[:200]}",
                    hint="Lower SESSION_RECALL_EMBEDDINGS_MAX_CHARS if the texts are too long "
                    "for the model."
                    if of_texts
                    else "Check SESSION_RECALL_EMBEDDINGS_MODEL and the API key.",
                    of_texts=of_texts,
                )
            try:
                return response.json()
            except ValueError:
                cause = "an answer that is not JSON"
        raise EmbedderUnavailable(
            f"The embeddings endpoint {self._url} did not answer after {self._attempts} "
            f"attempts (last: {cause}).",
            hint="Check that it runs; `session-recall embed` adds missing vectors.",
        )

    def _parse(self, answer: Any, count: int) -> list[Vector | None]:
        try:
            items = sorted(answer["data"], key=lambda item: item["index"])
            vectors = [item["embedding"] for item in items]
        except (KeyError, TypeError) as err:
            raise EmbeddingError(
                f"The embeddings endpoint answered in an unknown shape (no {err}).",
                hint="Point SESSION_RECALL_EMBEDDINGS_URL at an OpenAI-compatible /v1 API.",
            ) from None
        if len(vectors) != count:
            raise EmbeddingError(
                f"The embeddings endpoint returned {len(vectors)} vectors for {count} texts.",
                hint="Check the endpoint; it does not follow the OpenAI embeddings API.",
            )
        for vector in vectors:
            if not isinstance(vector, list) or len(vector) != self._dims:
                size = len(vector) if isinstance(vector, list) else type(vector).__name__
                raise DimensionMismatch(
                    f"The model {self._model!r} returned vectors of {size} dimensions; "
                    f"{self._dims} are configured.",
                    hint="Set SESSION_RECALL_EMBEDDINGS_DIMS to the model's output size.",
                )
        # Elasticsearch refuses a zero vector under cosine similarity.
        return [vector if any(vector) else None for vector in vectors]
