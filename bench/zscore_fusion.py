"""Z-score fusion, tried on LoCoMo's dev split beside memory_search's min-max fusion
(`recall.fusion`): each list's scores standardised over its own hits (minus their
mean, over their standard deviation), a hit missing from a list given that list's
lowest z (below every hit it kept, as its absence says), then weighed as min-max
fusion weighs: (1 - w) keyword + w vector.

The published session ranking on LoCoMo (arXiv 2606.04194) z-scores BM25 and the
best-turn cosine over a user's sessions; here it is tried on turns, the two lists of
memory_search's hybrid mode (`--variants z`, `bench.ranking_steps`).
"""

from collections.abc import Hashable, Sequence
from typing import TypeVar

from session_recall.recall.fusion import Fused, ranked
from session_recall.recall.session_ranking import zscored

K = TypeVar("K", bound=Hashable)


def zscore_fuse(
    keyword: Sequence[tuple[K, float]],
    vector: Sequence[tuple[K, float]],
    *,
    dense_weight: float,
) -> list[Fused[K]]:
    """Every key of either list, fused on z-scores, best first (ties as `fuse`)."""
    keyword_ranks = {key: rank for rank, (key, _) in enumerate(keyword, start=1)}
    vector_ranks = {key: rank for rank, (key, _) in enumerate(vector, start=1)}
    keyword_z, vector_z = zscored(keyword), zscored(vector)
    keyword_floor = min(keyword_z.values(), default=0.0)
    vector_floor = min(vector_z.values(), default=0.0)
    fused = []
    for key in dict.fromkeys([key for key, _ in (*keyword, *vector)]):
        score = (1 - dense_weight) * keyword_z.get(key, keyword_floor) + dense_weight * (
            vector_z.get(key, vector_floor)
        )
        fused.append(Fused(key, keyword_ranks.get(key), vector_ranks.get(key), score))
    return ranked(fused)
