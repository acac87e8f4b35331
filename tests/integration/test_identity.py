"""What makes an event one event: on an alias set up now, its user, its id and its
instant, wherever its partition is; on an alias set up before that rule, its user and
its id, so that replays of what it holds still meet their copies."""

from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.indexer.layout import IDENTITY_KEY, write_layout
from session_recall.templates import install
from tests.support import native as native_core
from tests.support.ndjson import event, write_ndjson

pytestmark = pytest.mark.integration


def _ingest(es_url: str, alias: str, path: Path) -> str:
    result = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, "ingest", str(path)])
    assert result.exit_code == 0, result.output
    return result.output


def _copies(es: Elasticsearch, alias: str, event_id: str) -> list[str]:
    es.indices.refresh(index=alias)
    hits = es.search(index=alias, query={"term": {"event_id": event_id}}, size=10)["hits"]["hits"]
    return sorted(hit["_source"]["timestamp"] for hit in hits)


@pytest.mark.parametrize("native", native_core.PATHS)
def test_an_id_reused_at_other_instants_is_other_events_each_stored_once(
    es_url: str, es: Elasticsearch, alias: str, tmp_path: Path, monkeypatch, native: str
):
    monkeypatch.setenv("SESSION_RECALL_NATIVE", native)
    layout = write_layout(es, alias)
    assert layout is not None and layout.identity == "user-event-time"
    reused = [
        {**event(1), "event_id": "msg-1", "timestamp": "2026-07-01T10:00:00Z"},
        {**event(2), "event_id": "msg-1", "timestamp": "2026-07-20T10:00:00Z"},  # same month
        {**event(3), "event_id": "msg-1", "timestamp": "2026-05-02T10:00:00Z"},  # another
    ]
    source = write_ndjson(tmp_path / "events.ndjson", reused)

    assert "indexed 3, already present 0" in _ingest(es_url, alias, source)
    assert "indexed 0, already present 3" in _ingest(es_url, alias, source)  # a replay
    assert _copies(es, alias, "msg-1") == [
        "2026-05-02T10:00:00.000000000Z",
        "2026-07-01T10:00:00.000000000Z",
        "2026-07-20T10:00:00.000000000Z",
    ]


def test_an_alias_set_up_before_keeps_its_ids_so_replays_meet_their_copies(
    es_url: str, es: Elasticsearch, alias: str, tmp_path: Path
):
    # An alias of an earlier release: its template records no identity rule.
    template = es.indices.get_index_template(name=alias)["index_templates"][0]["index_template"]
    del template["_meta"][IDENTITY_KEY]
    written = ("index_patterns", "template", "composed_of", "priority", "_meta")
    es.indices.put_index_template(name=alias, **{k: template[k] for k in written if k in template})
    first = write_ndjson(tmp_path / "first.ndjson", [{**event(1), "event_id": "msg-1"}])
    assert "indexed 1" in _ingest(es_url, alias, first)

    install(es, alias)  # `setup` again, as after an upgrade: the rule stays the old one
    layout = write_layout(es, alias)
    assert layout is not None and layout.identity == "user-event"
    later = {**event(1), "event_id": "msg-1", "timestamp": "2026-07-01T11:00:00Z"}
    replays = write_ndjson(tmp_path / "replays.ndjson", [{**event(1), "event_id": "msg-1"}, later])

    assert "indexed 0, already present 2" in _ingest(es_url, alias, replays)
    assert len(_copies(es, alias, "msg-1")) == 1
