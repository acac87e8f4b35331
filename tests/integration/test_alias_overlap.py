"""No two aliases share partitions: `setup` refuses, in one line and leaving nothing
behind, an alias whose name could share another alias's indices (`ev-2026` beside `ev`,
whose template takes in `ev-2*`; `ev-tombstones`), and one whose names are taken on the
node already, naming what took them. Nothing reads another alias's tombstones as events."""

import uuid
from collections.abc import Iterator

import pytest
from click.testing import CliRunner, Result
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.indexer import tombstone_index
from session_recall.mappings import COMPONENTS
from session_recall.templates import uninstall

pytestmark = pytest.mark.integration


def _cli(es_url: str, index: str, *args: str) -> Result:
    return CliRunner().invoke(main, ["--es-url", es_url, "--index", index, *args])


def _one_line_refusal(result: Result, exit_code: int = 2) -> str:
    assert result.exit_code == exit_code, result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert "Traceback" not in result.output
    return result.output


def _made_for(es: Elasticsearch, name: str) -> list[str]:
    """Whatever a setup of `name` makes: its templates and its indices."""
    made = [f"template {name}"] if es.indices.exists_index_template(name=name) else []
    made += [
        f"component {name}-{part}"
        for part in COMPONENTS
        if es.cluster.exists_component_template(name=f"{name}-{part}")
    ]
    indices = es.indices.get(index=f"{name}-*", expand_wildcards="all", allow_no_indices=True)
    return made + sorted(indices.body)


@pytest.fixture
def fresh(es: Elasticsearch) -> Iterator[str]:
    """A name nothing is set up under yet; whatever a test made of it goes afterwards."""
    name = f"t-fresh_{uuid.uuid4().hex[:8]}"
    yield name
    uninstall(es, name)
    es.indices.delete(index=f"{name}*", ignore_unavailable=True, allow_no_indices=True)
    es.options(ignore_status=404).indices.delete_index_template(name=f"{name}-2026")


@pytest.mark.parametrize("suffix", ["2026", "2025x", "1"])
def test_an_alias_that_could_share_anothers_partitions_is_refused(
    es: Elasticsearch, es_url: str, alias: str, suffix: str
):
    behind = sorted(es.indices.get_alias(name=alias).body)
    other = f"{alias}-{suffix}"
    # The name's own rule: refused as the configuration is read, before any command.
    refused = _one_line_refusal(_cli(es_url, other, "setup"), exit_code=3)
    assert f"'{other}'" in refused and f"'{alias}'" in refused
    assert _made_for(es, other) == []
    assert sorted(es.indices.get_alias(name=alias).body) == behind


def test_another_alias_tombstones_are_neither_an_alias_nor_events(
    es: Elasticsearch, es_url: str, alias: str
):
    erased = _cli(es_url, alias, "delete", "--user", "alice")  # makes the tombstone index
    assert erased.exit_code == 0, erased.output
    tombstones = tombstone_index(alias)
    es.indices.refresh(index=tombstones)
    held = es.count(index=tombstones)["count"]
    assert held > 0

    refused = _one_line_refusal(_cli(es_url, tombstones, "setup"), exit_code=3)
    assert "tombstone" in refused
    assert not es.indices.exists_index_template(name=tombstones)
    assert es.count(index=tombstones)["count"] == held
    # A command reading events through that name is refused by the name's rule too.
    status = _one_line_refusal(_cli(es_url, tombstones, "embed", "--status"), exit_code=3)
    assert "tombstones index" in status and "await" not in status


def test_indices_of_an_alias_made_before_the_rule_are_reported_by_name(
    es: Elasticsearch, es_url: str, fresh: str
):
    """`<fresh>-2026x` set up before names were checked: its partition would be taken
    into `<fresh>`, whose template matches `<fresh>-2*`."""
    older = f"{fresh}-2026x-2026.07"
    es.indices.create(index=older)
    refused = _one_line_refusal(_cli(es_url, fresh, "setup"))
    assert older in refused
    assert _made_for(es, fresh) == [older]


def test_an_index_of_the_alias_name_is_reported(es: Elasticsearch, es_url: str, fresh: str):
    es.indices.create(index=fresh)
    refused = _one_line_refusal(_cli(es_url, fresh, "setup"))
    assert f"'{fresh}' is the name of an index" in refused
    assert _made_for(es, fresh) == []


def test_a_template_of_an_alias_made_before_the_rule_is_named_and_nothing_is_left(
    es: Elasticsearch, es_url: str, fresh: str
):
    older = f"{fresh}-2026"  # its template, as its setup made it, with no index yet
    es.indices.put_index_template(
        name=older, index_patterns=[f"{older}-1*", f"{older}-2*"], priority=200
    )
    refused = _one_line_refusal(_cli(es_url, fresh, "setup"))
    assert older in refused
    assert _made_for(es, fresh) == []
