"""Ranking whole sessions, the published way (arXiv 2606.04194), as a prior on the hits.

A question is about one session more often than about a stray turn that shares its
words. Each session of the user is scored by two lists, each z-scored over the
sessions (minus their mean, over their standard deviation):

- BM25 of the question's stems over the session's whole text (its document, written by
  the enrichment pass: `indexer.enrichment.session_documents`);
- its best turn: the nearest of its turns among the vector list's hits (a session the
  list did not reach counts as the lowest there is).

    session = alpha * z(BM25) + (1 - alpha) * z(best turn)

Then each hit's fused score is mixed with its session's, min-max normalised over the
sessions scored:

    score' = (1 - weight) * score + weight * session'

A session without a document (stored before session documents, or not enriched yet)
counts 0 in the BM25 list. Pure: no request but the body it builds.
"""

import statistics
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from session_recall.core.user_filter import user_filter
from session_recall.recall.fusion import Fused, ranked

K = TypeVar("K", bound=Hashable)
# The sessions of the BM25 list: the best of the user's, by their whole text.
SESSIONS_DEPTH = 100


def bm25_body(user_id: str, stemmed: str) -> dict[str, Any]:
    """The user's `SESSIONS_DEPTH` sessions whose text best matches the question's
    stems (BM25 over each session's whole document)."""
    return {
        "query": {
            "bool": {
                "filter": user_filter(user_id),
                "must": [{"match": {"stems": stemmed}}],
            }
        },
        "size": SESSIONS_DEPTH,
        "_source": ["session_id"],
        "track_total_hits": False,
    }


def bm25_scores(hits: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Each session's BM25 score from the hits of `bm25_body`."""
    return {str(hit["_source"]["session_id"]): float(hit.get("_score") or 0.0) for hit in hits}


def zscored(hits: Sequence[tuple[K, float]]) -> dict[K, float]:
    """Each key's z-score over the list (0 for each when all are equal, or one)."""
    if not hits:
        return {}
    scores = [score for _, score in hits]
    mean, spread = statistics.fmean(scores), statistics.pstdev(scores)
    if spread <= 0:
        return {key: 0.0 for key, _ in hits}
    return {key: (score - mean) / spread for key, score in hits}


def best_turns(nearest: Sequence[tuple[K, float]], sessions: Mapping[K, str]) -> dict[str, float]:
    """Each session's best score among the vector list's hits."""
    best: dict[str, float] = {}
    for key, score in nearest:
        session = sessions.get(key)
        if session is not None and score > best.get(session, float("-inf")):
            best[session] = score
    return best


def session_scores(
    bm25: Mapping[str, float],
    dense: Mapping[str, float],
    *,
    alpha: float,
    among: Sequence[str] = (),
) -> dict[str, float]:
    """Each session's alpha * z(BM25) + (1 - alpha) * z(dense), over the sessions of
    either list and `among` (those of the hits); a session missing from a list takes
    0 in BM25, the lowest score there is in dense."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be within [0, 1], not {alpha}")
    sessions = list(dict.fromkeys([*bm25, *dense, *among]))
    if not sessions:
        return {}
    low = min(dense.values(), default=0.0)
    z_bm25 = zscored([(s, bm25.get(s, 0.0)) for s in sessions])
    z_dense = zscored([(s, dense.get(s, low)) for s in sessions])
    return {s: alpha * z_bm25[s] + (1 - alpha) * z_dense[s] for s in sessions}


def with_session_ranking(
    fused: Sequence[Fused[K]],
    sessions: Mapping[K, str],
    scores: Mapping[str, float],
    *,
    weight: float,
) -> list[Fused[K]]:
    """`fused` ranked again with each hit's score mixed with its session's (min-max
    normalised over `scores`; a session without one counts 0). At `weight` 1 the hits
    are ranked by their session's score first, then by their own, and scored by that
    rank; the order is kept at 0 or without scores."""
    if not 0 <= weight <= 1:
        raise ValueError(f"weight must be within [0, 1], not {weight}")
    if not scores or weight == 0:
        return list(fused)
    high, low = max(scores.values()), min(scores.values())
    spread = high - low
    norm = {s: (v - low) / spread if spread > 0 else 1.0 for s, v in scores.items()}
    if weight == 1:
        placed = sorted(fused, key=lambda f: (-norm.get(sessions[f.key], 0.0), -f.score))
        return [replace(f, score=1 - i / len(placed)) for i, f in enumerate(placed)]
    mixed = [
        replace(f, score=(1 - weight) * f.score + weight * norm.get(sessions[f.key], 0.0))
        for f in fused
    ]
    return ranked(mixed)
