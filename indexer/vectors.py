"""Vectors for the documents of a bulk chunk, at ingest.

A chunk's texts are embedded in one call just before its bulk request, in the
writer's bulk thread, so that embedding overlaps with the parsing of the next chunk.
A failing embedder never costs an event: the chunk is stored without vectors, and
the enrichment pass adds them later. Each model's vectors go to a field of their own
(`embeddings.<model>`), and `embedding_models` lists the models that processed the
event, a vector or not (a text of punctuation alone has none), which is what the
pass looks for. Whether an index takes a model's vectors is the enrichment's
(`enrichment.vector_mapping.check_index`).
"""

from collections.abc import Sequence
from typing import Any

from session_recall.embeddings import (
    MODELS_FIELD,
    VECTORS_FIELD,
    Embedder,
    EmbeddingError,
    vector_key,
)
from session_recall.indexer.document import Document

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
    extended = [
        doc.extended(vector_fields(embedder, vector))
        for doc, vector in zip(documents, vectors, strict=True)
    ]
    return extended, None
