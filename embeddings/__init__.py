"""Embeddings: texts into vectors, for the indexer (at ingest) and recall (queries).

A library below both: it imports only the core, and knows nothing of Elasticsearch.

- `StaticEmbedder`: the offline default, static token vectors shipped in a wheel;
- `EndpointEmbedder`: an OpenAI-compatible `/v1/embeddings` endpoint, for production;
- `Embedder`: what both offer, for any other one;
- `vector_field(model_id)`: where a model's vectors are stored.

    embedder = StaticEmbedder()
    [vector] = embedder.embed(["let's go with Postgres"])
"""

from session_recall.embeddings.embedder import (
    MODELS_FIELD,
    VECTORS_FIELD,
    Embedder,
    Vector,
    vector_field,
    vector_key,
)
from session_recall.embeddings.endpoint import EndpointEmbedder
from session_recall.embeddings.errors import (
    DimensionMismatch,
    EmbedderRefused,
    EmbedderUnavailable,
    EmbeddingError,
)
from session_recall.embeddings.static import StaticEmbedder

__all__ = [
    "MODELS_FIELD",
    "VECTORS_FIELD",
    "DimensionMismatch",
    "Embedder",
    "EmbedderRefused",
    "EmbedderUnavailable",
    "EmbeddingError",
    "EndpointEmbedder",
    "StaticEmbedder",
    "Vector",
    "vector_field",
    "vector_key",
]
