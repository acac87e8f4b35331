"""`setup` makes the tombstone index (issue 57, item 20): were it made by the first
erasure, writers and enrichment followers reading it meanwhile would be answered "no
shard available" until its shard started."""

import uuid

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.indexer import tombstone_index, tombstones
from session_recall.templates import uninstall

pytestmark = pytest.mark.integration


def test_setup_makes_the_tombstone_index_ready_to_read(es: Elasticsearch, es_url: str) -> None:
    alias = f"t-setup_tombstones_{uuid.uuid4().hex[:8]}"
    try:
        result = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, "setup"])
        assert result.exit_code == 0, result.output

        index = tombstone_index(alias)
        assert es.indices.exists(index=index)
        # Read at once, without waiting: its primary is active when setup returns.
        health = es.cluster.health(index=index, timeout="0s")
        assert health["status"] in ("green", "yellow"), health
        assert health["active_primary_shards"] == 1, health
        assert tombstones.removals_seen(es, alias) == 0  # what followers read
        assert tombstones.erased_at(es, alias, ["any-scope"]) == {}  # what writers read
        # Its mapping is the tombstones' own, not the events' template's.
        mapping = es.indices.get_mapping(index=index)[index]["mappings"]
        assert mapping["properties"]["erased_at"] == {"type": "date_nanos"}
    finally:
        uninstall(es, alias)
