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
from collections.abc import Sequence
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from session_recall.core.partitions import parse_partition
from session_recall.embeddings import (
    MODELS_FIELD,
    VECTORS_FIELD,
    Embedder,
    EmbeddingError,
    vector_key,
)
from session_recall.indexer.document import Document
from session_recall.indexer.errors import EmbeddingModelChanged, VectorFieldsMissing

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

    Raises `EmbeddingModelChanged` when the alias holds vectors of other models only:
    mixing two models' vectors would make similarities meaningless, and the new
    model's field is made by the backfill. An alias that does not exist passes: the
    bulk request says what is wrong with it.
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
        raise EmbeddingModelChanged(
            f"{alias!r} holds vectors of {', '.join(sorted(models))}, not of the configured "
            f"model {embedder.model_id!r}; its vectors would not compare with them.",
            hint="Run `session-recall embed` to compute the new model's vectors "
            "for every stored event (into a field of its own), or configure the previous "
            "model again.",
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
