"""`setup`: idempotent templates, one write index, routing required."""

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


def test_setup_twice_gives_the_same_templates_and_one_write_index(
    es: Elasticsearch, es_url: str, alias: str
):
    before = _snapshot(es, alias)  # the fixture already ran setup once
    result = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, "setup"])
    assert result.exit_code == 0, result.output
    assert "(kept)" in result.output

    after = _snapshot(es, alias)

    assert after == before
    aliases = after[2]
    assert list(aliases) == [f"{alias}-000001"]
    assert aliases[f"{alias}-000001"]["aliases"][alias]["is_write_index"] is True


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


def test_rollover_moves_the_write_alias(es: Elasticsearch, alias: str):
    rolled = es.indices.rollover(alias=alias).body
    assert rolled["rolled_over"] is True
    assert rolled["new_index"] == f"{alias}-000002"
    mapping = es.indices.get_mapping(index=rolled["new_index"]).body
    assert mapping[rolled["new_index"]]["mappings"]["_routing"] == {"required": True}
