"""The reranker the settings ask for, for memory_search (off by default).

SESSION_RECALL_RERANKER=none       the default: the fused order is the answer
SESSION_RECALL_RERANKER=endpoint   a `/rerank` endpoint (SESSION_RECALL_RERANKER_URL,
                                   _MODEL, _API_KEY, _TIMEOUT)
SESSION_RECALL_RERANKER=local      the ONNX cross-encoder added by
                                   `session-recall models add-reranker`
"""

from session_recall.config import Settings
from session_recall.recall import EndpointReranker, LocalReranker, Reranker


def reranker_for(settings: Settings) -> Reranker | None:
    """Building one is cheap: the local model loads on its first search."""
    if settings.reranker == "endpoint":
        # The settings' validator made sure both are there.
        assert settings.reranker_url and settings.reranker_model
        key = settings.reranker_api_key
        return EndpointReranker(
            url=settings.reranker_url,
            model=settings.reranker_model,
            api_key=None if key is None else key.get_secret_value(),
            timeout_s=settings.reranker_timeout,
        )
    if settings.reranker == "local":
        return LocalReranker(settings.models_folder)
    return None
