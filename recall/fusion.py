"""Reciprocal rank fusion, in the client.

Elasticsearch's own `rrf` (and `linear`) retrievers live in x-pack's rank-rrf module:
licence-gated, and absent from the distribution this project is tested on. So the
keyword and kNN searches go out together in one `msearch`, and their rankings are
fused here, as RRF defines it (Cormack, Clarke and Buettcher, 2009): a hit's score is
the sum over the rankings it appears in of 1 / (k + rank), with rank from 1. Only
ranks count, never the raw scores, which are on incomparable scales (BM25 is
unbounded, a cosine similarity is not).
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

# RRF's constant, as in the paper and in Elasticsearch's retriever: it damps how much
# being first in one ranking outweighs being near the top of both.
RANK_CONSTANT = 60


@dataclass(frozen=True)
class Fused(Generic[K]):
    key: K
    keyword_rank: int | None
    vector_rank: int | None
    score: float


def fuse(
    keyword: Sequence[K], vector: Sequence[K], *, rank_constant: int = RANK_CONSTANT
) -> list[Fused[K]]:
    """Every key of either ranking, best first. Ties go to the better single rank, then
    to the keyword ranking, so the order is the same on every call."""
    keyword_ranks = {key: rank for rank, key in enumerate(keyword, start=1)}
    vector_ranks = {key: rank for rank, key in enumerate(vector, start=1)}
    fused = []
    for key in dict.fromkeys([*keyword, *vector]):
        k_rank, v_rank = keyword_ranks.get(key), vector_ranks.get(key)
        score = sum(1 / (rank_constant + r) for r in (k_rank, v_rank) if r is not None)
        fused.append(Fused(key, k_rank, v_rank, score))
    unranked = len(keyword) + len(vector) + 1

    def order(item: Fused[K]) -> tuple[float, int, int, int]:
        k_rank = item.keyword_rank or unranked
        v_rank = item.vector_rank or unranked
        return (-item.score, min(k_rank, v_rank), k_rank, v_rank)

    return sorted(fused, key=order)
