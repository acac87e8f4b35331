"""Sessions as documents, the published session ranking on LoCoMo (arXiv 2606.04194),
tried on the dev split beside memory_search's default (issue 59, items 1 and 2).

Each session of a user is one document of an index beside the alias (`index_of`): its
turns' text and their stems, for BM25 over the whole session (k1 1.5, b 0.75, the
paper's). Built by the harness from the stored, enriched turns, after the pass.

At search time (`session_ranking`), a session's score is the paper's fusion

    alpha * z(BM25 of the session) + (1 - alpha) * z(best turn's cosine)

z-scored over the user's sessions, the best turn's cosine being the question's
nearest turn of that session among the vector list's (`nearest`), or, with `exact`,
over every turn of the user (a kNN search as deep as the user's turns: what the
paper computes, at a cost that grows with the history). A session the vector list did not
reach counts as its lowest cosine.

`with_session_ranking` then mixes each hit's fused score with its session's, min-max
normalised over the sessions (`weight`; 1 ranks the hits by their session first, then
by their own score, the paper's recipe on its own, and scores them by that rank).
Pure, but for the build.
"""

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from elasticsearch import Elasticsearch, helpers

from bench.zscore_fusion import zscored
from session_recall.core.user_filter import user_filter
from session_recall.recall.fusion import Fused, ranked
from session_recall.recall.memory_query import knn_body

K = TypeVar("K", bound=Hashable)
# A conversation of LoCoMo's holds fewer turns than this.
_MAX_TURNS = 10_000
# The sessions of one user searched at once: a LoCoMo conversation holds at most 35.
MAX_SESSIONS = 500
# A LoCoMo conversation holds fewer turns than this (at most 700).
EXACT_TURNS = 1_000

_SETTINGS = {
    "number_of_shards": 1,
    "number_of_replicas": 0,
    "similarity": {"paper": {"type": "BM25", "k1": 1.5, "b": 0.75}},
}
_MAPPINGS = {
    "dynamic": "strict",
    "properties": {
        "user_id": {"type": "keyword"},
        "session_id": {"type": "keyword"},
        "text": {"type": "text", "analyzer": "standard", "similarity": "paper"},
        "stems": {"type": "text", "analyzer": "whitespace", "similarity": "paper"},
        "turns": {"type": "integer"},
    },
}


def index_of(alias: str) -> str:
    """The sessions' index of a run's alias: outside its patterns (`<alias>-1*`,
    `<alias>-2*`), so no event search reaches it."""
    return f"{alias}-sessions-bench"


def store(client: Elasticsearch, alias: str, users: list[str]) -> str:
    """One document per session of each of `users`, built from its stored turns; the
    index's name."""
    index = index_of(alias)
    client.indices.create(index=index, settings=_SETTINGS, mappings=_MAPPINGS)
    actions: list[dict[str, Any]] = []
    for user in users:
        answer = client.search(
            index=alias,
            routing=user,
            query={"bool": {"filter": user_filter(user)}},
            size=_MAX_TURNS,
            sort=[{"timestamp": "asc"}, {"event_id": "asc"}],
            source={"includes": ["session_id", "text", "stems"]},
        )
        turns: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for hit in answer["hits"]["hits"]:
            turns[str(hit["_source"]["session_id"])].append(hit["_source"])
        for session, held in turns.items():
            actions.append({
                "_index": index, "_id": f"{user}\x1f{session}", "routing": user,
                "user_id": user, "session_id": session, "turns": len(held),
                "text": "\n".join(str(t.get("text") or "") for t in held),
                "stems": " ".join(str(t.get("stems") or "") for t in held),
            })  # fmt: skip
    helpers.bulk(client, actions, chunk_size=200, refresh=True)
    return index


def drop(client: Elasticsearch, alias: str) -> None:
    client.options(ignore_status=404).indices.delete(index=index_of(alias))


def bm25_body(user_id: str, stemmed: str, *, field: str = "stems") -> dict[str, Any]:
    """Every session of the user (up to `MAX_SESSIONS`), scored by BM25 of the
    question's terms over the session's whole `field` (0 for one that shares none)."""
    return {
        "query": {
            "bool": {
                "filter": user_filter(user_id),
                "should": [{"match": {field: stemmed}}],
            }
        },
        "size": MAX_SESSIONS,
        "_source": ["session_id"],
        "track_total_hits": False,
    }


def best_turn_body(
    filters: list[dict[str, Any]], vector: list[float], *, field: str
) -> dict[str, Any]:
    """The user's turns nearest the question, `EXACT_TURNS` deep, with twice as many
    candidates: every turn of a LoCoMo conversation, so its best turn of each session
    is found (the node runs no scripts, so no `script_score` over every turn)."""
    return knn_body(filters, vector, field=field, size=EXACT_TURNS)


def session_scores(
    bm25: Mapping[str, float], dense: Mapping[str, float], *, alpha: float
) -> dict[str, float]:
    """Each session's alpha * z(BM25) + (1 - alpha) * z(dense), over the sessions of
    `bm25` (every session of the user); a session without a dense score takes the
    lowest there is."""
    sessions = list(bm25)
    if not sessions:
        return {}
    low = min(dense.values(), default=0.0)
    z_bm25 = zscored([(s, bm25[s]) for s in sessions])
    z_dense = zscored([(s, dense.get(s, low)) for s in sessions])
    return {s: alpha * z_bm25[s] + (1 - alpha) * z_dense[s] for s in sessions}


def best_turns(nearest: Sequence[tuple[K, float]], sessions: Mapping[K, str]) -> dict[str, float]:
    """Each session's best score among the vector list's hits."""
    best: dict[str, float] = {}
    for key, score in nearest:
        session = sessions.get(key)
        if session is not None and score > best.get(session, float("-inf")):
            best[session] = score
    return best


def with_session_ranking(
    fused: Sequence[Fused[K]],
    sessions: Mapping[K, str],
    scores: Mapping[str, float],
    *,
    weight: float,
) -> list[Fused[K]]:
    """`fused` with each hit's score mixed with its session's (min-max normalised over
    `scores`; a session without one counts 0). At `weight` 1, the hits are ranked by
    their session's score first, then by their own."""
    if not scores or weight == 0:
        return list(fused)
    high, low = max(scores.values()), min(scores.values())
    spread = high - low
    norm = {s: (v - low) / spread if spread > 0 else 1.0 for s, v in scores.items()}
    if weight >= 1:  # sessions first: their order kept by the steps that follow
        placed = sorted(fused, key=lambda f: (-norm.get(sessions[f.key], 0.0), -f.score))
        return [replace(f, score=1 - i / len(placed)) for i, f in enumerate(placed)]
    mixed = [
        replace(f, score=(1 - weight) * f.score + weight * norm.get(sessions[f.key], 0.0))
        for f in fused
    ]
    return ranked(mixed)
