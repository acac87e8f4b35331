"""Pure builders for memory_search: validated arguments in, request bodies out.

Every body carries the user's `term` filter: in the keyword query's `filter`, inside
the `knn` option's own `filter` (a pre-filter: the k nearest are taken among the
user's events, never among everyone's and then trimmed), and in each neighbour query.
"""

from collections.abc import Sequence
from typing import Any

from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.core.user_filter import user_filter
from session_recall.embeddings import MODELS_FIELD
from session_recall.recall.query import Body
from session_recall.recall.text_match import any_word_clauses

# What a hit or a neighbour needs; user_id is the searcher's own, never read back. The
# payload (any JSON, megabytes at times) is left out: no answer shows it, and the read
# by event id gives it.
SOURCE = ["event_id", "session_id", "timestamp", "type", "text", "metadata"]
# kNN looks at this many candidates per shard at least: int8-quantized vectors need a
# few more than k to find the true nearest, and below 100 the search costs no less.
MIN_CANDIDATES = 100
# The keyword list's fields and their weights, chosen on LoCoMo's development split
# (BENCHMARKS.md, "memory_search on LoCoMo").
KEYWORD_BOOSTS = {"text": 0.3, "stems": 0.3, "context": 1.0}


def event_filters(
    user_id: str, *, since: Instant | None, until: Instant | None, types: tuple[str, ...]
) -> list[Body]:
    filters: list[Body] = user_filter(user_id)
    bounds = {}
    if since is not None:
        bounds["gte"] = since.to_elasticsearch()
    if until is not None:
        bounds["lte"] = until.to_elasticsearch()
    if bounds:
        filters.append({"range": {"timestamp": bounds}})
    if types:
        filters.append({"terms": {"type": list(types)}})
    return filters


def keyword_body(
    filters: list[Body],
    query: str,
    *,
    stemmed: str,
    size: int,
    expansion: str = "",
    expansion_weight: float = 0.0,
) -> Body:
    """BM25 over the query's words, any of them (a `match` query ORs them): the more
    and the rarer the words an event shares, the higher it ranks. The text is a value,
    never query syntax; the caller has left its function words out (`query`) and
    stemmed them (`stemmed`, see `core.stems`).

    Three fields, their scores added: the event's own words, its stems, and the stems
    of its text with its session's previous and next turn (the last two come with the
    enrichment pass; an event not enriched yet is found by its own words).

    `expansion`: stems added by pseudo-relevance feedback (`bench.expansion`, a step
    the bench tries), matched on the two stem fields at `expansion_weight` of their
    weights."""
    matches = any_word_clauses(query, boost=KEYWORD_BOOSTS["text"])
    for terms, weight in ((stemmed, 1.0), (expansion, expansion_weight)):
        if terms and weight > 0:
            matches += [
                {"match": {field: {"query": terms, "boost": KEYWORD_BOOSTS[field] * weight}}}
                for field in ("stems", "context")
            ]
    return {
        "query": {"bool": {"filter": filters, "should": matches, "minimum_should_match": 1}},
        "size": size,
        "_source": SOURCE,
        "track_total_hits": False,
    }


def knn_body(
    filters: list[Body],
    vector: list[float],
    *,
    field: str,
    size: int,
    extra: Sequence[str] = (),
) -> Body:
    """The `size` nearest of the user's events; `extra`: fields beyond `SOURCE`."""
    return {
        "knn": {
            "field": field,
            "query_vector": vector,
            "k": size,
            "num_candidates": max(MIN_CANDIDATES, 2 * size),
            "filter": {"bool": {"filter": filters}},
        },
        "size": size,
        "_source": [*SOURCE, *extra],
        "track_total_hits": False,
    }


def vectors_body(filters: list[Body], ids: list[str], *, field: str) -> Body:
    """The stored vectors (`field`) of the user's events of `ids`: vectors are left out
    of `_source` unless asked for."""
    return {
        "query": {"bool": {"filter": [*filters, {"ids": {"values": ids}}]}},
        "size": len(ids),
        "_source": {"includes": [field], "exclude_vectors": False},
        "track_total_hits": False,
    }


def coverage_bodies(filters: list[Body], model_id: str) -> list[Body]:
    """Two counts beside the search: the events it searches, and those of them that
    lack `model_id`'s vectors (the model has not processed them yet)."""
    processed: Body = {"term": {MODELS_FIELD: model_id}}
    return [
        {"size": 0, "track_total_hits": True, "query": {"bool": {"filter": filters}}},
        {
            "size": 0,
            "track_total_hits": True,
            "query": {"bool": {"filter": filters, "must_not": [processed]}},
        },
    ]


def neighbour_bodies(
    user_id: str, session_id: str, position: list[Any], *, context: int
) -> tuple[Body, Body]:
    """The `context` events of the session just before `position` (sort values in the
    event order, its timestamp's nanoseconds first) and just after it: nearest first for
    the ones before."""
    filters: list[Body] = user_filter(user_id, session_id=session_id)
    ascending = event_order()
    descending = [{field: "desc" for field in key} for key in ascending]
    common = {
        "query": {"bool": {"filter": filters}},
        "size": context,
        "_source": SOURCE,
        "track_total_hits": False,
        "search_after": position,
    }
    return {**common, "sort": descending}, {**common, "sort": ascending}
