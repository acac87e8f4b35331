"""The reranker slot: memory_search's last ranking step, off unless one is configured.

After fusion and session scoring, the best `candidates` hits (RERANK_CANDIDATES by
default) are scored again by a reranker, each against the question, and reordered by
that score; the hits below them keep their place after them. A reranker is one of
two kinds, both brought by the operator (none ships with the product):

- an endpoint speaking the common `/rerank` shape (`rerank_endpoint`);
- a local ONNX cross-encoder (`rerank_local`, `session-recall models add-reranker`).

A reranker sits in the answer path, so its failure (a timeout, a 5xx, an answer in
another shape) never fails the search: the hits keep the fused order and the
result's `notice` says so.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from session_recall.recall.fusion import Fused, K

# How many of the fused hits a reranker sees: more than any `limit` (50 at most is
# asked rarely; 10 is the default), few enough for a cross-encoder on a CPU.
RERANK_CANDIDATES = 20
# Each candidate's text is cut to this many characters before it is sent.
RERANK_MAX_CHARS = 2_000


class RerankFailed(Exception):
    """The reranker gave no usable scores; `reason` says why, for the notice."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Reranker(Protocol):
    """Scores each document against `query`: one float per document, higher better.
    Raises `RerankFailed` when it cannot."""

    @property
    def name(self) -> str: ...

    def scores(self, query: str, documents: Sequence[str]) -> list[float]: ...


@dataclass(frozen=True)
class Rerank:
    """What the plan asks its driver to rerank: the question and the candidates' texts.
    The driver sends back their scores, or the `RerankFailed` that stopped them."""

    query: str
    documents: list[str]


def candidates_of(texts: Sequence[str], count: int) -> list[str]:
    """The first `count` texts, each cut to RERANK_MAX_CHARS."""
    return [text[:RERANK_MAX_CHARS] for text in texts[:count]]


def reranked(fused: Sequence[Fused[K]], scores: Sequence[float]) -> list[Fused[K]]:
    """`fused` with its first `len(scores)` hits ordered by `scores` (ties keep the
    fused order), the rest after them as they were."""
    head = sorted(range(len(scores)), key=lambda i: -scores[i])
    return [fused[i] for i in head] + list(fused[len(scores) :])


def failed_notice(reranker: str, reason: str) -> str:
    """The notice of a search whose reranker failed."""
    return (
        f"The reranker ({reranker}) failed ({reason}); the hits keep the fused order. "
        "Check it runs, or unset SESSION_RECALL_RERANKER."
    )
