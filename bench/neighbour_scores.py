"""Context on the vector side, at search time: a turn near the question in meaning
lends some of its score to the turns after it.

An answer often comes a turn or two after the turn that names its subject ("what did
you make in pottery class?" ... "a bowl"). Stored vectors of each turn with the turns
before it (context vectors) find it, but cost the enrichment pass two to four times
the model's work. This step reads what the search already has: each hit's `context_of`
(the ids of the turns before it, written with its keyword context) and the vector
list's scores, each normalised as in fusion:

    score' = (1 - weight) * score + weight * mean(score of each turn before it)

a turn before it that is not in the list counts 0. Pure: no request.
"""

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

from session_recall.recall.fusion import normalised

K = TypeVar("K", bound=Hashable)


def with_context(
    ranking: Sequence[tuple[K, float]],
    before: Mapping[K, Sequence[str]],
    id_of: Callable[[K], str],
    *,
    weight: float,
) -> list[tuple[K, float]]:
    """`ranking` (key, score; best first) scored again with the turns before each key
    (`before`: their ids; `id_of` a key's id), best first; as it is at weight 0."""
    if not 0 <= weight <= 1:
        raise ValueError(f"weight must be within [0, 1], not {weight}")
    if weight == 0 or not ranking:
        return list(ranking)
    scores = normalised(ranking)
    by_id = {id_of(key): score for key, score in scores.items()}
    mixed = []
    for key, _ in ranking:
        turns = before.get(key) or ()
        lent = sum(by_id.get(turn, 0.0) for turn in turns) / len(turns) if turns else 0.0
        mixed.append((key, (1 - weight) * scores[key] + weight * lent))
    return sorted(mixed, key=lambda pair: -pair[1])
