"""The heavy runs, `scripts/test --heavy`: what takes a minute or more because of what it
sets up, not because of what it checks. Clusters of several nodes (a node SIGKILLed
under load, a missing shard, a TLS pair), `serve` while a node of its own is stopped
and restarted or frozen, a secured node restarted as a hostile user finds it, each
framework's extra installed into a fresh environment, and the benchmark harness end to
end. CI runs them after the suite; they assert behaviour, never speed, and take the
suite's own fixtures (its node, its dedicated nodes, its shared clients)."""

from tests.conftest import (
    _no_background_enrichment_outlives_its_test,
    dedicated_nodes,
    elasticsearch,
    es,
    es_url,
)

__all__ = [
    "_no_background_enrichment_outlives_its_test",
    "dedicated_nodes",
    "elasticsearch",
    "es",
    "es_url",
]
