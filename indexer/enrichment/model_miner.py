"""Model-backed mining: an OpenAI-compatible chat-completions endpoint (`POST
{url}/chat/completions`) with JSON-schema output, off by default.

For a batch of a user's new turns it asks the user's nearest current memories of
`nearest` (the store's search, given by the application), sends both
(`mining_request`), and returns the operations that keep to what it was given
(`mining_answer`). It is tried once a batch: a failure is a `MinerFailed`, and the
consolidation pass leaves the batch's turns for the next pass rather than retrying in
a loop a model server that is down.
"""

from collections.abc import Callable, Sequence

import httpx

from session_recall.embeddings import PooledHttp
from session_recall.indexer.enrichment.miner import Turn
from session_recall.indexer.enrichment.mining_answer import (
    MinerFailed,
    Operations,
    checked_operations,
)
from session_recall.indexer.enrichment.mining_request import Known, mining_request

# A local model writes a few hundred tokens of operations in tens of seconds.
DEFAULT_MINER_TIMEOUT_S = 60.0
# Turns sent in one request: enough context for a correction and what it corrects,
# few enough that a small model keeps track of them and a failure costs little.
DEFAULT_MINER_BATCH = 20

# The user's current memories nearest the turns: (user, turns) -> memories.
Nearest = Callable[[str, Sequence[Turn]], list[Known]]


class ModelMiner(PooledHttp):
    """Operations on a user's memories from a chat-completions endpoint. Thread-safe."""

    def __init__(
        self,
        *,
        url: str,
        model: str,
        nearest: Nearest,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_MINER_TIMEOUT_S,
        batch_size: int = DEFAULT_MINER_BATCH,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        base = url.rstrip("/")
        suffix = "/chat/completions"
        self._url = base if base.endswith(suffix) else f"{base}{suffix}"
        self._model = model
        self._nearest = nearest
        self.batch_size = batch_size
        self._open_http(timeout_s=timeout_s, api_key=api_key, transport=transport)

    @property
    def origin(self) -> str:
        """What the memories it finds name as their origin."""
        return f"model {self._model}"

    def operations(self, user: str, turns: Sequence[Turn]) -> Operations:
        """The checked operations for `user`'s `turns`, or `MinerFailed`."""
        memories = self._nearest(user, turns)
        body = mining_request(self._model, turns, memories)
        try:
            response = self._http.post(self._url, json=body)
        except httpx.TimeoutException:
            raise MinerFailed("no answer within SESSION_RECALL_MINER_TIMEOUT") from None
        except httpx.HTTPError as err:
            raise MinerFailed(f"no answer ({type(err).__name__})") from None
        if response.status_code >= 400:
            raise MinerFailed(f"status {response.status_code}")
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise MinerFailed("an answer that is not a chat completion") from None
        return checked_operations(
            content,
            turn_ids={t.event_id for t in turns},
            memory_ids={m.memory_id for m in memories},
        )


__all__ = ["DEFAULT_MINER_BATCH", "DEFAULT_MINER_TIMEOUT_S", "ModelMiner", "Nearest"]
