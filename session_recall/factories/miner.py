"""The miner the settings ask for, for `consolidate` and `serve --consolidate`.

SESSION_RECALL_MINER=builtin   the default: the built-in English miner, no model
SESSION_RECALL_MINER=model     a chat-completions endpoint with JSON-schema output
                               (SESSION_RECALL_MINER_URL, _MODEL, _API_KEY, _TIMEOUT)

The model is shown the user's current memories nearest the turns: each user turn's
best few by the memories' own search (`MemoriesSearcher`, the user's alone).
"""

from collections.abc import Sequence

from elasticsearch import Elasticsearch

from session_recall.config import Settings
from session_recall.embeddings import Embedder
from session_recall.indexer.enrichment.miner import Turn
from session_recall.indexer.enrichment.mining_request import Known
from session_recall.indexer.enrichment.model_miner import ModelMiner, Nearest
from session_recall.recall import InvalidQuery, MemoriesSearcher
from session_recall.recall.memories import MAX_MEMORY_QUERY_CHARS

# Each turn's nearest memories, and the most shown in one request: enough for the
# subjects a few turns touch, few enough to keep the request small.
_PER_TURN = 5
_SHOWN = 40


def miner_for(
    settings: Settings, client: Elasticsearch, *, embedder: Embedder | None
) -> ModelMiner | None:
    """The model miner, or None for the built-in one."""
    if settings.miner != "model":
        return None
    # The settings' validator made sure both are there.
    assert settings.miner_url and settings.miner_model
    key = settings.miner_api_key
    return ModelMiner(
        url=settings.miner_url,
        model=settings.miner_model,
        nearest=nearest_memories(client, settings.index, embedder=embedder),
        api_key=None if key is None else key.get_secret_value(),
        timeout_s=settings.miner_timeout,
    )


def nearest_memories(client: Elasticsearch, alias: str, *, embedder: Embedder | None) -> Nearest:
    """The user's current memories nearest the turns, each once, best first by turn."""

    def nearest(user: str, turns: Sequence[Turn]) -> list[Known]:
        searcher = MemoriesSearcher(client, user_id=user, alias=alias, embedder=embedder)
        shown: dict[str, Known] = {}
        for turn in turns:
            try:
                found = searcher.search(turn.text[:MAX_MEMORY_QUERY_CHARS], limit=_PER_TURN)
            except InvalidQuery:  # a turn of no words (or too many terms): nothing to look up
                continue
            for memory in found.memories:
                shown.setdefault(
                    memory.memory_id,
                    Known(memory.memory_id, memory.kind, memory.subject, memory.statement),
                )
            if len(shown) >= _SHOWN:
                break
        return list(shown.values())[:_SHOWN]

    return nearest


__all__ = ["miner_for", "nearest_memories"]
