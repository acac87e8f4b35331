"""Tool output over the text limit is stored cut, not refused (issue 57, item 3).

A 2 MB `tool_result` was a 422 (or a dead letter), so an agent's long tool output was
lost from memory. It is stored with its head and tail, `truncated` holding the size it
was sent with, and the words of both parts are found; a 2 MB `user_message` is still
refused. Over HTTP (`POST /v1/events`) and NDJSON (`ingest`, on both write paths).
"""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.indexer.parsing import DEFAULT_MAX_TEXT_BYTES
from tests.support import native as native_core
from tests.support.ndjson import stored, write_ndjson

pytestmark = pytest.mark.integration

TWO_MB = 2 * 1024 * 1024
HEAD, TAIL = "headwordquokka", "tailwordnarwhal"
_FILLER = " the tool printed this line again"


def _output(event_id: str, kind: str) -> dict[str, Any]:
    """An event of `kind` whose text is 2 MB: a word at its start and one at its end."""
    body = _FILLER * (TWO_MB // len(_FILLER))
    return {
        "event_id": event_id, "user_id": "alice", "session_id": "s-tools",
        "timestamp": "2026-07-01T00:00:00Z", "type": kind, "text": f"{HEAD}{body} {TAIL}",
    }  # fmt: skip


def _stored_cut(es: Elasticsearch, alias: str, event_id: str) -> dict[str, Any]:
    es.indices.refresh(index=alias)
    [hit] = es.search(index=alias, query={"term": {"event_id": event_id}})["hits"]["hits"]
    source: dict[str, Any] = hit["_source"]
    assert source["truncated"] == len(_output(event_id, "tool_result")["text"].encode())
    assert len(source["text"].encode()) <= DEFAULT_MAX_TEXT_BYTES
    assert "…[truncated, " in source["text"]
    for word in (HEAD, TAIL):  # both kept parts are findable
        query = {"bool": {"filter": [{"term": {"event_id": event_id}}, {"match": {"text": word}}]}}
        assert es.count(index=alias, query=query)["count"] == 1, word
    return source


def test_a_2_mb_tool_result_is_stored_cut_over_http_and_a_2_mb_message_refused(
    es: Elasticsearch, settings: Settings
) -> None:
    with TestClient(create_app(settings, enrich=False)) as web:
        kept = web.post("/v1/events?refresh=wait_for", json=_output("t-1", "tool_result"))
        refused = web.post("/v1/events", json=_output("m-1", "user_message"))
        found = web.post(
            "/v1/users/alice/tools/cross_session_search",
            json={"innerThought": "t", "query": TAIL},
        )

    assert kept.status_code == 200, kept.text[:500]
    assert refused.status_code == 422, refused.text[:500]
    [result] = refused.json()["results"]
    assert result["reason"] == f"text: is over the {DEFAULT_MAX_TEXT_BYTES}-byte limit"
    _stored_cut(es, settings.index, "t-1")
    assert stored(es, settings.index, event_id="m-1") == 0
    assert found.status_code == 200, found.text[:500]
    [hit] = found.json()  # found by the word of its tail
    assert (hit["type"], hit["eventId"]) == ("tool_result", "t-1"), hit
    assert hit["text"].startswith(HEAD)


def _ingest(settings: Settings, source: Path, *more: str) -> Result:
    args = ["--es-url", settings.elasticsearch_url, "--index", settings.index]
    return CliRunner().invoke(
        main, [*args, "ingest", str(source), "--no-enrich", "--dead-letter",
               str(source.with_suffix(".dead")), *more],
    )  # fmt: skip


@pytest.mark.parametrize("native_path", native_core.PATHS)
def test_a_2_mb_tool_result_is_stored_cut_by_ingest_and_a_2_mb_message_dead_lettered(
    es: Elasticsearch, settings: Settings, tmp_path: Path, monkeypatch, native_path: str
) -> None:
    monkeypatch.setenv("SESSION_RECALL_NATIVE", native_path)
    events = [
        _output("t-1", "tool_call"),
        _output("t-2", "tool_response"),
        _output("t-3", "shell_output"),  # cut only where the operator says so
        _output("m-1", "user_message"),
    ]
    source = write_ndjson(tmp_path / "events.ndjson", events)

    result = _ingest(settings, source, "--truncate-types", "shell_output")

    assert result.exit_code == 1, result.output  # the message was dead-lettered
    assert "indexed 3, already present 0, rejected 1" in result.output, result.output
    for event_id in ("t-1", "t-2", "t-3"):
        _stored_cut(es, settings.index, event_id)
    [dead] = [json.loads(line) for line in source.with_suffix(".dead").read_text().splitlines()]
    assert dead["event"]["event_id"] == "m-1"
    assert dead["reason"].endswith(f"text: is over the {DEFAULT_MAX_TEXT_BYTES}-byte limit")
    # A replay meets the stored copies: the same ids, the same cut.
    again = _ingest(settings, source, "--truncate-types", "shell_output")
    assert "indexed 0, already present 3, rejected 1" in again.output, again.output
    # Without the setting, the operator's type is refused like any other.
    other = write_ndjson(tmp_path / "other.ndjson", [_output("t-4", "shell_output")])
    assert "rejected 1" in _ingest(settings, other).output
    assert stored(es, settings.index, event_id="t-4") == 0
