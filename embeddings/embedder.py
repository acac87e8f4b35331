"""The interface every embedder offers, and where its vectors are stored.

An embedder turns texts into unit-free float vectors compared by cosine similarity.
Each model's vectors live in a field of their own, `embeddings.<key>`, so that a
model change never mixes two models' vectors in one kNN graph: the new model's
vectors are computed into a new field (`session-recall embed`) beside the
old one. `embedding_models` lists, per event, the models that have processed it.
"""

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias

from session_recall.core.digest import digest

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vector: TypeAlias = "list[float] | NDArray[np.float32]"
else:
    Vector = object

# The object field holding one sub-field per model, and the keyword field naming the
# models each event was processed by.
VECTORS_FIELD = "embeddings"
MODELS_FIELD = "embedding_models"

_CLEAN_KEY = re.compile(r"[a-z0-9][a-z0-9_-]{0,99}")


class Embedder(Protocol):
    """Texts in, one vector per text out (None for a text with nothing to embed)."""

    @property
    def model_id(self) -> str:
        """Names the model and its output size: two ids never share vectors."""
        ...

    @property
    def dims(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list["Vector | None"]:
        """One vector per text, in order. Raises an `EmbeddingError` when it cannot."""
        ...


def query_vector(embedder: Embedder, text: str) -> "Vector | None":
    """A question's vector: through the embedder's `embed_query` when it has one (a
    model that embeds questions and stored texts apart, e5's "query: " and "passage: "),
    else as any text."""
    embed_query = getattr(embedder, "embed_query", None)
    if embed_query is not None:
        vector: Vector | None = embed_query(text)
        return vector
    [vector] = embedder.embed([text])
    return vector


def vector_key(model_id: str) -> str:
    """The sub-field of `embeddings` that holds `model_id`'s vectors.

    A model id that is already a plain lowercase name is used as it is; any other gets
    a digest suffix, so two ids that clean up to the same name stay apart.
    """
    if _CLEAN_KEY.fullmatch(model_id):
        return model_id
    cleaned = re.sub(r"[^a-z0-9_-]+", "_", model_id.lower()).strip("_-")[:80] or "model"
    return f"{cleaned}-{digest(model_id)[:8]}"


def vector_field(model_id: str) -> str:
    """The full path of `model_id`'s vector field, for kNN and `exists` queries."""
    return f"{VECTORS_FIELD}.{vector_key(model_id)}"
