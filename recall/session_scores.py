"""Session-level scoring: a hit ranks higher when its session holds other good hits.

An answer in a long history is often spread over a few turns of one session (a plan
made, then changed), and a question is about one session more often than about a
stray turn that happens to share its words. So after fusion each hit's score is
mixed with its session's: the mean of the session's `top` best fused scores (a session
with fewer hits counts 0 for each missing one), and the hits are ranked again:

    score' = (1 - weight) * score + weight * session score

Both are within [0, 1], so the result is too. Pure: no request.
"""

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from session_recall.recall.fusion import Fused, ranked

K = TypeVar("K", bound=Hashable)


def with_sessions(
    fused: Sequence[Fused[K]], sessions: Mapping[K, str], *, weight: float, top: int
) -> list[Fused[K]]:
    """`fused` ranked again with each hit's session score mixed in (see above); the
    order is kept when `weight` is 0."""
    if not 0 <= weight <= 1:
        raise ValueError(f"weight must be within [0, 1], not {weight}")
    if top < 1:
        raise ValueError(f"top must be at least 1, not {top}")
    if weight == 0:
        return list(fused)
    best: dict[str, list[float]] = {}
    for item in fused:
        best.setdefault(sessions[item.key], []).append(item.score)
    session_score = {
        session: sum(sorted(scores, reverse=True)[:top]) / top for session, scores in best.items()
    }
    mixed = [
        replace(item, score=(1 - weight) * item.score + weight * session_score[sessions[item.key]])
        for item in fused
    ]
    return ranked(mixed)
