"""Embeddings: texts into vectors, for the indexer (at ingest) and recall (queries).

A library below both: it imports only the core, and knows nothing of Elasticsearch.

- `StaticEmbedder`: static token vectors shipped in a wheel, offline and fast;
- `TransformerEmbedder`: a small transformer encoder run here with onnxruntime, its
  weights fetched once (`local_models.install`): e5-small is the default;
- `EndpointEmbedder`: an OpenAI-compatible `/v1/embeddings` endpoint, for production;
- `Embedder`: what both offer, for any other one;
- `vector_field(model_id)`: where a model's vectors are stored;
- `query_vector(embedder, text)`: a question's vector (a query prefix where the model
  has one).

    embedder = StaticEmbedder()
    [vector] = embedder.embed(["let's go with Postgres"])
"""

from session_recall.embeddings.embedder import (
    MODELS_FIELD,
    VECTORS_FIELD,
    Embedder,
    Vector,
    query_vector,
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
from session_recall.embeddings.isolation import Isolated, embed_isolated
from session_recall.embeddings.onnx_model import OnnxModel, onnx_model
from session_recall.embeddings.pooled_http import PooledHttp
from session_recall.embeddings.static import StaticEmbedder
from session_recall.embeddings.transformer import TransformerEmbedder

__all__ = [
    "MODELS_FIELD",
    "VECTORS_FIELD",
    "DimensionMismatch",
    "Embedder",
    "EmbedderRefused",
    "EmbedderUnavailable",
    "EmbeddingError",
    "EndpointEmbedder",
    "Isolated",
    "OnnxModel",
    "PooledHttp",
    "StaticEmbedder",
    "TransformerEmbedder",
    "Vector",
    "embed_isolated",
    "onnx_model",
    "query_vector",
    "vector_field",
    "vector_key",
]
