"""Score fusion of the keyword and kNN rankings, in the client.

Elasticsearch's own `rrf` (and `linear`) retrievers live in x-pack's rank-rrf module:
licence-gated, and absent from the distribution this project is tested on. So the
keyword and kNN searches go out together in one `msearch`, and their hits are fused
here: each list's scores are min-max normalised over its own hits (the best 1, the
worst 0; a list of one hit, or of equal scores, counts 1 for each), a hit missing
from a list counts 0 there, and the two are weighed: (1 - w) keyword + w vector.

Why not reciprocal rank fusion, which sums 1 / (60 + rank) and ignores the scores: on
LoCoMo's long conversations it answered worse than keywords alone (CHANGES.md),
because it lets a weak vector ranking pull unrelated turns level with strong keyword
matches. Normalised scores keep a
keyword hit far ahead of the rest ahead; the weight says how far meaning may move it.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

# The vector list's weight when nothing better is known for the model: every embedder
# tried on LoCoMo's dev split beat keywords at 0.3 (leave-one-conversation-out chose
# 0.2 to 0.35 for the static model, 0.35 to 0.5 for transformer encoders).
DEFAULT_DENSE_WEIGHT = 0.3
# A model's own weight, chosen on LoCoMo's dev split leaving one conversation out
# (`python -m bench.memory_eval --weights ...`), keyed by the embedder's model id.
DENSE_WEIGHTS: dict[str, float] = {
    # The static model (`StaticEmbedder`), beside the keyword list with stems and
    # context: leaving one conversation out picks 0.1-0.2 for recall@10, where one
    # open-domain question of 44 falls behind keywords; 0.3 keeps every category within
    # 0.01 of keywords and ranks sessions best (BENCHMARKS.md, "memory_search on LoCoMo").
    "wordllama-l2-supercat-64-v1": 0.3,
    # The local encoders (`session-recall models fetch`): leaving one conversation out
    # picked 0.4-0.55 for e5-small (0.5 in one run for all five, 0.5-0.6 in another)
    # and 0.3-0.4 for MiniLM.
    "e5-small-onnx-v1": 0.5,
    "minilm-onnx-v1": 0.4,
    # bge-small: 0.4 for three conversations, 0.5 for two.
    "bge-small-onnx-v1": 0.4,
}


def dense_weight_for(model_id: str | None) -> float:
    """The vector list's weight for the embedder `model_id`."""
    if model_id is None:
        return DEFAULT_DENSE_WEIGHT
    return DENSE_WEIGHTS.get(model_id, DEFAULT_DENSE_WEIGHT)


@dataclass(frozen=True)
class Fused(Generic[K]):
    key: K
    keyword_rank: int | None
    vector_rank: int | None
    score: float


def fuse(
    keyword: Sequence[tuple[K, float]],
    vector: Sequence[tuple[K, float]],
    *,
    dense_weight: float = DEFAULT_DENSE_WEIGHT,
) -> list[Fused[K]]:
    """Every key of either list (key, score; best first), fused best first. Ties go to
    the better single rank, then to the keyword list, so the order is the same on every
    call. With one list empty, the other's order is kept."""
    if not 0 <= dense_weight <= 1:
        raise ValueError(f"dense_weight must be within [0, 1], not {dense_weight}")
    keyword_ranks = {key: rank for rank, (key, _) in enumerate(keyword, start=1)}
    vector_ranks = {key: rank for rank, (key, _) in enumerate(vector, start=1)}
    keyword_scores, vector_scores = normalised(keyword), normalised(vector)
    fused = []
    for key in dict.fromkeys([key for key, _ in (*keyword, *vector)]):
        score = (1 - dense_weight) * keyword_scores.get(key, 0.0) + dense_weight * (
            vector_scores.get(key, 0.0)
        )
        fused.append(Fused(key, keyword_ranks.get(key), vector_ranks.get(key), score))
    return ranked(fused)


def ranked(fused: Sequence[Fused[K]]) -> list[Fused[K]]:
    """`fused` best first: by score, ties to the better single rank, then to the
    keyword list, so the order is the same on every call."""
    unranked = len(fused) + 1

    def order(item: Fused[K]) -> tuple[float, int, int, int]:
        k_rank = item.keyword_rank or unranked
        v_rank = item.vector_rank or unranked
        return (-item.score, min(k_rank, v_rank), k_rank, v_rank)

    return sorted(fused, key=order)


def combined(*lists: Sequence[tuple[K, float]]) -> list[tuple[K, float]]:
    """Several rankings of one kind (an event's vector and its context's, say) as one:
    each key scored the mean of its normalised scores (0 where a list lacks it), best
    first, ties in the order first met."""
    if len(lists) == 1:
        return list(lists[0])
    each = [normalised(ranking) for ranking in lists]
    keys = dict.fromkeys(key for ranking in lists for key, _ in ranking)
    scores = [(key, sum(n.get(key, 0.0) for n in each) / len(lists)) for key in keys]
    return sorted(scores, key=lambda pair: -pair[1])


def normalised(hits: Sequence[tuple[K, float]]) -> dict[K, float]:
    """Each key's score min-max normalised over the list (1 for each when all are
    equal)."""
    if not hits:
        return {}
    scores = [score for _, score in hits]
    low, high = min(scores), max(scores)
    if high <= low:
        return {key: 1.0 for key, _ in hits}
    return {key: (score - low) / (high - low) for key, score in hits}
