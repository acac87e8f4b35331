"""`setup`: idempotent templates, the current period's partition, routing required."""

import pytest
from click.testing import CliRunner
from elasticsearch import BadRequestError, Elasticsearch

from session_recall.cli import main
from session_recall.templates import install

pytestmark = pytest.mark.integration


def _snapshot(es: Elasticsearch, alias: str) -> tuple[object, object, object]:
    template = es.indices.get_index_template(name=alias).body
    components = es.cluster.get_component_template(name=f"{alias}-*").body
    aliases = es.indices.get_alias(name=alias).body
    return template, components, aliases


def test_setup_twice_gives_the_same_templates_and_one_partition_without_a_write_index(
    es: Elasticsearch, es_url: str, alias: str
):
    before = _snapshot(es, alias)  # the fixture already ran setup once
    result = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, "setup"])
    assert result.exit_code == 0, result.output
    assert "kept." in result.output

    after = _snapshot(es, alias)

    assert after == before
    aliases = after[2]
    (partition,) = aliases
    assert partition.startswith(f"{alias}-2")
    # No write index: every write names its own partition, never the alias.
    assert "is_write_index" not in aliases[partition]["aliases"][alias]


def test_setup_creates_what_is_missing(es: Elasticsearch, alias: str):
    es.indices.delete(index=f"{alias}-*")
    result = install(es, alias)
    assert result.created_index
    assert es.indices.exists_alias(name=alias)


def test_indexing_without_routing_is_refused(es: Elasticsearch, alias: str):
    with pytest.raises(BadRequestError) as refused:
        es.index(index=alias, document={"event_id": "e1", "user_id": "alice", "text": "hi"})
    assert refused.value.error == "routing_missing_exception"


def test_mapping_is_strict_and_keeps_nanoseconds(es: Elasticsearch, alias: str):
    es.index(
        index=alias,
        routing="alice",
        document={
            "event_id": "e1",
            "user_id": "alice",
            "timestamp": "2026-07-01T12:00:00.123456789Z",
        },
        refresh=True,
    )
    hit = es.search(index=alias, routing="alice", sort=["timestamp"]).body["hits"]["hits"][0]
    assert hit["sort"] == [1782907200123456789]
    with pytest.raises(BadRequestError) as refused:
        es.index(index=alias, routing="alice", document={"event_id": "e2", "surprise": 1})
    assert refused.value.error == "strict_dynamic_mapping_exception"


def test_setup_keeps_the_layout_and_refuses_a_new_period_once_partitions_exist(
    es: Elasticsearch, es_url: str, alias: str
):
    def setup(*args: str):
        return CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, "setup", *args])

    changed = setup("--shards", "3", "--routing-partition-size", "2")
    assert changed.exit_code == 0, changed.output
    kept = setup()
    assert "3 shard(s), routing partition size 2" in kept.output, kept.output

    refused = setup("--partition", "week")
    assert refused.exit_code == 2, refused.output
    assert "stored twice" in refused.output and "--partition month" in refused.output


def test_a_routing_partition_size_needs_more_shards(es_url: str, alias: str):
    result = CliRunner().invoke(
        main,
        ["--es-url", es_url, "--index", alias, "setup", "--routing-partition-size", "2"],
    )
    assert result.exit_code == 2, result.output
    assert "--shards 3" in result.output
