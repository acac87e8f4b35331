"""Vectors for the documents of a bulk chunk, and the check that they fit the index.

A chunk's texts are embedded in one call just before its bulk request, in the
writer's bulk thread, so that embedding overlaps with the parsing of the next chunk.
A failing embedder never costs an event: the chunk is stored without vectors, and
`backfill` adds them later. Each model's vectors go to a field of their own
(`embeddings.<model>`), and `embedding_models` lists the models that processed the
event, a vector or not (a text of punctuation alone has none), which is what
`backfill` looks for.
"""

import logging
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from elasticsearch import Elasticsearch, NotFoundError

from session_recall.core.order import event_order
from session_recall.core.partitions import parse_partition
from session_recall.embeddings import (
    MODELS_FIELD,
    VECTORS_FIELD,
    Embedder,
    EmbeddingError,
    vector_key,
)
from session_recall.indexer import bulk
from session_recall.indexer.document import Document
from session_recall.indexer.errors import IndexerError, VectorFieldsMissing
from session_recall.indexer.retry import RetryPolicy

log = logging.getLogger(__name__)

# What a vector adds to a document, per dimension, as JSON (a float32 written out).
_BYTES_PER_DIMENSION = 12


def vector_bytes(embedder: Embedder | None) -> int:
    """An upper estimate of what a vector adds to a document, for the chunk bounds."""
    if embedder is None:
        return 0
    return embedder.dims * _BYTES_PER_DIMENSION + 2 * len(vector_key(embedder.model_id)) + 64


def vector_fields(embedder: Embedder, vector: Any) -> dict[str, Any]:
    """The fields a document gains from `embedder`: its vector (if any) and its model."""
    fields: dict[str, Any] = {MODELS_FIELD: [embedder.model_id]}
    if vector is not None:
        fields[VECTORS_FIELD] = {vector_key(embedder.model_id): vector}
    return fields


def with_vectors(
    embedder: Embedder, documents: Sequence[Document], texts: Sequence[str]
) -> tuple[list[Document], EmbeddingError | None]:
    """`documents` with their vectors, or as they are with the embedder's error."""
    try:
        vectors = embedder.embed(texts)
    except EmbeddingError as err:
        return list(documents), err
    model_id, key = embedder.model_id, vector_key(embedder.model_id)
    extended = []
    for doc, vector in zip(documents, vectors, strict=True):
        fields: dict[str, Any] = {MODELS_FIELD: [model_id]}
        if vector is not None:
            fields[VECTORS_FIELD] = {key: vector}
        extended.append(doc.extended(fields))
    return extended, None


def check_index(client: Elasticsearch, alias: str, embedder: Embedder) -> str | None:
    """Whether `embedder`'s vectors may be written to `alias`: None when they may, else
    why not (an index events go to predates the vector fields; events then go without).

    The alias may hold vectors of other models only (the model was changed): the new
    model's field is made by the enrichment pass (its backfill maps it), so until then
    events go without vectors, and the pass adds them. An alias that does not exist
    passes: the bulk request says what is wrong with it.
    """
    try:
        aliases = client.indices.get_alias(name=alias).body
        mappings = client.indices.get_mapping(index=alias).body
    except NotFoundError:
        return None
    models: set[str] = set()
    for entry in mappings.values():
        properties = entry.get("mappings", {}).get("properties", {})
        models.update(properties.get(VECTORS_FIELD, {}).get("properties", {}))
    mine = vector_key(embedder.model_id)
    if models and mine not in models:
        return (
            f"{alias!r} holds vectors of {', '.join(sorted(models))}, not yet of the "
            f"configured model {embedder.model_id!r}: the enrichment pass adds them "
            "(`session-recall embed`, or serve's in the background)"
        )
    for index in _written_indices(aliases, alias):
        properties = mappings.get(index, {}).get("mappings", {}).get("properties", {})
        if VECTORS_FIELD not in properties:
            return (
                f"the index {index} has no vector fields (an earlier release made it): "
                "run `session-recall setup`, then `session-recall embed`"
            )
    return None


def mapped_models(client: Elasticsearch, alias: str) -> set[str]:
    """The vector fields (model keys) mapped on the alias's indices; none when the
    alias does not exist. Raises `VectorFieldsMissing` for an index that predates them."""
    try:
        mappings = client.indices.get_mapping(index=alias).body
    except NotFoundError:
        return set()
    models: set[str] = set()
    for index, entry in sorted(mappings.items()):
        properties = entry.get("mappings", {}).get("properties", {})
        if VECTORS_FIELD not in properties:
            raise VectorFieldsMissing(
                f"The index {index} has no vector fields: it was made by an earlier release.",
                hint="Run `session-recall setup` once; it adds them to the existing indices.",
            )
        models.update(properties[VECTORS_FIELD].get("properties", {}))
    return models


def _written_indices(aliases: dict[str, Any], alias: str) -> list[str]:
    """The indices events go to: every partition behind the alias (an event goes to
    its own period's, however old), and the write index of a single-index layout."""
    indices = sorted(aliases)
    written = [index for index in indices if parse_partition(alias, index) is not None]
    for index in indices:
        if aliases[index].get("aliases", {}).get(alias, {}).get("is_write_index"):
            written.append(index)
    if not written and len(indices) == 1:
        written = indices
    return written


# The models that refused an event's text, and each one's reason (not searchable): the
# text is kept without that model's vector (`page_vectors`).
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
            hits = client.search(
                index=alias, query=marked, sort=event_order(), size=_DROP_PAGE,
                source={"exclude_vectors": False}, seq_no_primary_term=True,
                track_total_hits=False, search_after=after, allow_partial_search_results=False,
            ).body["hits"]["hits"]  # fmt: skip
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
