"""Pseudo-relevance feedback for the keyword list (RM3-style): the query is expanded
with the stems that its best hits share, and the keyword search runs again.

A question names a thing in its own words ("the sport Mel took up"); its best hits
often name it in theirs ("pottery class"), and so do the turns around it that the
question's words miss. Each stem of the first `docs` hits weighs the hit's normalised
score times the stem's share of that hit's stems; the `terms` heaviest that the query
lacks are added to it. Pure: no request.
"""

from collections import Counter
from collections.abc import Sequence


def expansion_terms(
    hits: Sequence[tuple[str, float]], query_stems: str, *, docs: int, terms: int
) -> list[str]:
    """The stems to add to a query whose stems are `query_stems`, from `hits` (each
    hit's stems, space-separated, and its score; best first): heaviest first, ties in
    alphabetical order, so the same hits always give the same terms."""
    if terms < 1 or docs < 1:
        return []
    top = [(stems.split(), score) for stems, score in hits[:docs]]
    high = max((score for _, score in top), default=0.0)
    if high <= 0:
        return []
    have = set(query_stems.split())
    weights: dict[str, float] = {}
    for words, score in top:
        if not words:
            continue
        counts = Counter(words)
        for word, count in counts.items():
            if word not in have and len(word) > 1:
                weights[word] = weights.get(word, 0.0) + (score / high) * count / len(words)
    return [word for word, _ in sorted(weights.items(), key=lambda wc: (-wc[1], wc[0]))[:terms]]
