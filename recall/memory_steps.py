"""The ranking steps of memory_search's plan that search again (`memory_recipe`): the
keyword list with its query expanded from its best hits, and a second vector round
seeded by the first hits. Each is a sub-plan: it yields its `Searches` and returns the
new list's hits. Both were measured on LoCoMo's dev split and are off by default."""

from collections.abc import Generator

from session_recall.core.stems import stems
from session_recall.embeddings import VECTORS_FIELD, vector_field, vector_key
from session_recall.recall import transport
from session_recall.recall.expansion import expansion_terms
from session_recall.recall.memory_plan import Key, Searches, key_of, scored
from session_recall.recall.memory_query import keyword_body, knn_body, vectors_body
from session_recall.recall.memory_recipe import Recipe
from session_recall.recall.query import Body
from session_recall.recall.vector_feedback import seeded

_Step = Generator[Searches, list[Body], list[Body]]


def expanded(
    keyword: list[Body], filters: list[Body], words: str, stemmed: str, depth: int, recipe: Recipe
) -> _Step:
    """The keyword list fetched again, its query expanded with the stems its best hits
    share (`expansion`); the first list when they share none."""
    texts = [stems(str(hit["_source"].get("text", ""))) for hit in keyword]
    ranked = [(text, score) for text, (_, score) in zip(texts, scored(keyword), strict=True)]
    added = expansion_terms(
        ranked, stemmed, docs=recipe.expansion_docs, terms=recipe.expansion_terms
    )
    if not added:
        return keyword
    body = keyword_body(
        filters, words, stemmed=stemmed, size=depth,
        expansion=" ".join(added), expansion_weight=recipe.expansion_weight,
    )  # fmt: skip
    [answer] = yield Searches([body])
    return transport.hits(answer)


def second_round(
    vector: list[float],
    seeds: list[Key],
    filters: list[Body],
    model: str,
    depth: int,
    *,
    weight: float,
) -> _Step:
    """The vector list again, its query moved towards the seeds' stored vectors
    (`vector_feedback`); nothing when no seed has one. Every search carries the user's
    filters: a seed is one of the user's events or nothing."""
    field, key = vector_field(model), vector_key(model)
    [answer] = yield Searches([vectors_body(filters, [k[1] for k in seeds], field=field)])
    wanted = set(seeds)
    stored = [
        found
        for hit in transport.hits(answer)
        if key_of(hit) in wanted
        and (found := (hit["_source"].get(VECTORS_FIELD) or {}).get(key)) is not None
    ]
    if not stored:
        return []
    [again] = yield Searches([knn_body(filters, seeded(vector, stored, weight=weight), field=field,
                                       size=depth)])  # fmt: skip
    return transport.hits(again)


def session_prior(
    vector: list[float], sessions: list[str], filters: list[Body], model: str
) -> Generator[Searches, list[Body], dict[str, float]]:
    """How near each of `sessions`' vectors (stored under `model` on its turns) is to
    the question's `vector` (both of unit length): one turn per session, collapsed."""
    field, key = vector_field(model), vector_key(model)
    body: Body = {
        "query": {"bool": {"filter": [*filters, {"terms": {"session_id": sessions}}]}},
        "collapse": {"field": "session_id"},
        "size": len(sessions),
        "_source": {"includes": ["session_id", field], "exclude_vectors": False},
        "track_total_hits": False,
    }
    [answer] = yield Searches([body])
    near = {}
    for hit in transport.hits(answer):
        stored = (hit["_source"].get(VECTORS_FIELD) or {}).get(key)
        if stored is not None:
            near[str(hit["_source"]["session_id"])] = sum(
                a * b for a, b in zip(vector, stored, strict=True)
            )
    return near
