"""What the settings ask for, built in one place: the embedder, the background
enricher, the miner and the reranker. Every surface (the CLI, `serve`, the adapters'
stores, the tools) builds them here, never by hand.

- `embedder_for`: the encoder for ingestion, backfill and memory_search (`embedder`);
- `enricher_for`: the background enricher, sharing its alias by leases (`enricher`);
- `miner_for`, `nearest_memories`: the model miner of `consolidate`, or None (`miner`);
- `reranker_for`: memory_search's reranker, off by default (`reranker`).

Each is imported on first use, so that building one does not load the others' stacks.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from session_recall.factories.embedder import embedder_for
    from session_recall.factories.enricher import enricher_for
    from session_recall.factories.miner import miner_for, nearest_memories
    from session_recall.factories.reranker import reranker_for

_HOMES = {
    "embedder_for": "embedder",
    "enricher_for": "enricher",
    "miner_for": "miner",
    "nearest_memories": "miner",
    "reranker_for": "reranker",
}

__all__ = ["embedder_for", "enricher_for", "miner_for", "nearest_memories", "reranker_for"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'session_recall.factories' has no attribute {name!r}")
    return getattr(import_module(f"session_recall.factories.{home}"), name)
