"""A reranker served over HTTP in the common `/rerank` shape (Cohere's, and that of
Jina, vLLM, llama.cpp's server and others): `POST {url}/rerank` with the model, the
query, the documents and `top_n`; it answers `results`, each an `index` into the
documents and its `relevance_score`.

It answers within its own deadline (`timeout_s`) and is tried once: it sits in
memory_search's answer path, where a retry would cost more than the fused order it
would improve. Any failure is a `RerankFailed`, which keeps the fused order.
"""

from collections.abc import Sequence
from typing import Any

import httpx

from session_recall.embeddings import PooledHttp
from session_recall.recall.rerank import RerankFailed

DEFAULT_RERANK_TIMEOUT_S = 1.0


class EndpointReranker(PooledHttp):
    """Scores from a `/rerank` endpoint. Thread-safe (one pooled client)."""

    def __init__(
        self,
        *,
        url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_RERANK_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        base = url.rstrip("/")
        self._url = base if base.endswith("/rerank") else f"{base}/rerank"
        self._model = model
        # Kept between searches, as the embeddings endpoint's (`PooledHttp`).
        self._open_http(timeout_s=timeout_s, api_key=api_key, transport=transport)

    @property
    def name(self) -> str:
        return f"endpoint {self._model}"

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        body = {
            "model": self._model,
            "query": query,
            "documents": list(documents),
            "top_n": len(documents),
        }
        try:
            response = self._http.post(self._url, json=body)
        except httpx.TimeoutException:
            raise RerankFailed("no answer within its deadline") from None
        except httpx.HTTPError as err:
            raise RerankFailed(type(err).__name__) from None
        if response.status_code >= 400:
            raise RerankFailed(f"status {response.status_code}")
        try:
            return _parsed(response.json(), len(documents))
        except ValueError:
            raise RerankFailed("an answer that is not JSON") from None


def _parsed(answer: Any, count: int) -> list[float]:
    """One score per document, from `results` ([{index, relevance_score}]). A document
    the answer leaves out scores below every one it names."""
    try:
        results = answer["results"]
        named = {int(item["index"]): float(item["relevance_score"]) for item in results}
    except (KeyError, TypeError, ValueError):
        raise RerankFailed("an answer without results of index and relevance_score") from None
    if not named or any(not 0 <= index < count for index in named):
        raise RerankFailed("an answer whose indices are not the documents sent")
    floor = min(named.values()) - 1.0
    return [named.get(i, floor) for i in range(count)]
