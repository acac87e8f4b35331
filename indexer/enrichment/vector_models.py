"""The models whose vectors an alias holds, and dropping one model's vectors.

`embedding_models` lists the models that processed an event (a vector or none to
give); `embedding_refused` the models that refused its text, each one's reason in
`embedding_refusals` (not searchable): the text is kept without that model's vector
(`page_vectors`).
"""

from collections.abc import Callable
from typing import Any

import orjson
from elasticsearch import Elasticsearch

from session_recall.embeddings import MODELS_FIELD, VECTORS_FIELD, vector_key
from session_recall.indexer import bulk
from session_recall.indexer.enrichment.paging import search_page
from session_recall.indexer.errors import IndexerError
from session_recall.indexer.retry import RetryPolicy

REFUSED_FIELD = "embedding_refused"
REFUSALS_FIELD = "embedding_refusals"
# Events re-indexed a request when a model's vectors are dropped: each carries every
# model's vector, so a few hundred keep a request small.
_DROP_PAGE = 200
# A pass re-reads what changed meanwhile (an enrichment's write): more passes than this
# means something keeps writing those events.
_DROP_PASSES = 10


def stored_models(client: Elasticsearch, alias: str) -> set[str]:
    """The models whose vectors or marks some event of `alias` holds (none when the
    alias does not exist)."""
    answer = client.search(
        index=alias, size=0, ignore_unavailable=True, allow_no_indices=True,
        aggs={"models": {"terms": {"field": MODELS_FIELD, "size": 100}}},
    )  # fmt: skip
    buckets = answer.body.get("aggregations", {}).get("models", {}).get("buckets", [])
    return {str(bucket["key"]) for bucket in buckets}


def drop_model(
    client: Elasticsearch,
    alias: str,
    model_id: str,
    *,
    policy: RetryPolicy | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> int:
    """Remove `model_id`'s vectors (and its marks) from every event of `alias`; how many
    events lost them. An update cannot remove a field, so each event is indexed again
    from its source, read with its vectors, without the model's; conditionally on the
    version read, so a write meanwhile (an enrichment's) is never undone: that event is
    read again by the next pass. The model's field stays in the mapping, empty."""
    policy = policy or RetryPolicy()
    field = vector_key(model_id)
    marked = {"bool": {"should": [{"term": {MODELS_FIELD: model_id}},
                                  {"term": {REFUSED_FIELD: model_id}}]}}  # fmt: skip
    dropped = 0
    for _ in range(_DROP_PASSES):
        client.indices.refresh(index=alias)
        after: list[Any] | None = None
        conflicts = 0
        while True:
            hits = search_page(
                client, alias, marked, size=_DROP_PAGE, after=after,
                source={"exclude_vectors": False}, versions=True,
            )  # fmt: skip
            if not hits:
                break
            actions = [_without(hit, model_id, field) for hit in hits]
            responses = bulk.send(client, actions, policy=policy, stats=bulk.BulkStats())
            for hit, response in zip(hits, responses, strict=True):
                if 200 <= response.status < 300:
                    dropped += 1
                elif response.status == 409:
                    conflicts += 1
                elif response.status != 404:
                    raise IndexerError(
                        f"Elasticsearch refused to rewrite event {hit['_id']} without the "
                        f"vectors of {model_id!r}: {response.error}.",
                        hint="Check the credentials (the enrich role), then run it again.",
                    )
            if on_progress is not None:
                on_progress(dropped)
            after = hits[-1]["sort"]
        if not conflicts:
            return dropped
    raise IndexerError(
        f"Events kept changing while the vectors of {model_id!r} were dropped.",
        hint="Run it again once the enrichment is idle.",
    )


def _without(hit: dict[str, Any], model_id: str, field: str) -> bulk.Action:
    source = dict(hit["_source"])
    vectors = {k: v for k, v in (source.pop(VECTORS_FIELD, None) or {}).items() if k != field}
    if vectors:
        source[VECTORS_FIELD] = vectors
    for listed in (MODELS_FIELD, REFUSED_FIELD):
        kept = [m for m in source.get(listed) or [] if m != model_id]
        source[listed] = kept
        if not kept:
            source.pop(listed)
    reasons = dict(source.pop(REFUSALS_FIELD, None) or {})
    reasons.pop(model_id, None)
    if reasons:
        source[REFUSALS_FIELD] = reasons
    header = {
        "index": {"_index": hit["_index"], "_id": hit["_id"], "routing": hit["_routing"],
                  "if_seq_no": hit["_seq_no"], "if_primary_term": hit["_primary_term"]}
    }  # fmt: skip
    return header, orjson.dumps(source, option=orjson.OPT_SERIALIZE_NUMPY)
