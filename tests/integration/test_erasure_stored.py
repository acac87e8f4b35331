"""An erasure removes what is stored, whatever its timestamp (issue 57, item 1).

A producer whose clock runs fast stores events stamped ahead of the eraser's: an
erasure that runs once they are stored removes them, with their stems, vectors and the
contexts that hold their words, on every scope kind and on both surfaces (`delete`
and `DELETE /v1/users/...`). Their replays stay refused; new events are stored. What
an erasure keeps (new events stored while it ran) it counts, and says why.
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
from session_recall.core.instant import Instant
from session_recall.embeddings import StaticEmbedder
from session_recall.http import create_app
from session_recall.indexer import Event, Scope, Submission, Writer, enrich, erase
from tests.support.hooked import HookedClient
from tests.support.ndjson import stored, write_ndjson

pytestmark = pytest.mark.integration

WORD = "plumbvortex"
_MINUTE = 60 * 10**9


def _cli(es_url: str, alias: str, *args: str) -> Result:
    return CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, *args])


def _carol(now: Instant) -> list[dict[str, Any]]:
    """A turn stamped a minute ago, one half an hour ahead with the word, and the
    turn after it, whose context holds the word."""

    def turn(n: int, minutes: int, text: str) -> dict[str, Any]:
        return {
            "event_id": f"c-{n}", "user_id": "carol", "session_id": "s-1",
            "timestamp": Instant(now.nanos + minutes * _MINUTE).isoformat(),
            "type": "user_message", "text": text, "contact_id": "k-1", "inbox_id": "web",
        }  # fmt: skip

    return [
        turn(0, -1, "the boiler makes a noise"),
        turn(1, 30, f"it sounds like a {WORD} now"),
        turn(2, 31, "and then it stops"),
    ]


def _holding(es: Elasticsearch, alias: str) -> list[str]:
    """The events of carol whose text, stems, context or words hold the word."""
    es.indices.refresh(index=alias)
    query = {
        "bool": {
            "filter": [{"term": {"user_id": "carol"}}],
            "must": [{"multi_match": {"query": WORD, "fields": ["text", "stems", "context"]}}],
        }
    }
    hits = es.search(index=alias, query=query, size=50)["hits"]["hits"]
    return sorted(hit["_source"]["event_id"] for hit in hits)


def _store_and_enrich(es: Elasticsearch, es_url: str, alias: str, source: Path) -> None:
    ingested = _cli(es_url, alias, "ingest", str(source), "--no-enrich")
    assert ingested.exit_code == 0, ingested.output
    enrich(es, alias, StaticEmbedder())
    # The word is in the event's text and stems, and in the next turn's context.
    assert _holding(es, alias) == ["c-1", "c-2"]


SCOPES = [
    pytest.param(["--user", "carol"], 3, id="user"),
    pytest.param(["--user", "carol", "--session", "s-1"], 3, id="session"),
    pytest.param(["--user", "carol", "--contact", "k-1", "--inbox", "web"], 3, id="contact"),
    pytest.param(["--user", "carol", "--event", "c-1"], 1, id="event"),
]


@pytest.mark.parametrize(("args", "removed"), SCOPES)
def test_delete_removes_stored_events_stamped_after_it_and_every_field_they_reach(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path, args: list[str], removed: int
) -> None:
    source = write_ndjson(tmp_path / "carol.ndjson", _carol(Instant.now()))
    _store_and_enrich(es, es_url, alias, source)

    deleted = _cli(es_url, alias, "delete", *args)

    assert deleted.exit_code == 0, deleted.output
    assert deleted.output.startswith(f"Removed {removed} "), deleted.output
    assert "Kept" not in deleted.output
    assert stored(es, alias, user_id="carol") == 3 - removed
    enrich(es, alias, StaticEmbedder())  # a pass after it brings nothing back
    assert _holding(es, alias) == []
    # Replays of what was erased, whatever their stamps, stay out.
    replayed = _cli(es_url, alias, "ingest", str(source), "--no-enrich")
    assert replayed.exit_code == 0, replayed.output
    assert f"({removed} of an erased scope)" in replayed.output, replayed.output
    assert stored(es, alias, user_id="carol") == 3 - removed
    # A new event after the erasure is stored.
    now = Instant.now().isoformat()
    new = {**_carol(Instant.now())[0], "event_id": "c-9", "timestamp": now, "text": "a new turn"}
    later = _cli(es_url, alias, "ingest", str(write_ndjson(tmp_path / "new", [new])))
    assert later.exit_code == 0, later.output
    assert "indexed 1" in later.output, later.output


def test_delete_over_http_removes_stored_events_stamped_after_it(
    es: Elasticsearch, es_url: str, alias: str, settings: Settings, tmp_path: Path
) -> None:
    events = _carol(Instant.now())
    _store_and_enrich(es, es_url, alias, write_ndjson(tmp_path / "carol.ndjson", events))

    with TestClient(create_app(settings, enrich=False)) as web:
        answer = web.delete("/v1/users/carol")
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert (body["removed"], body["kept"]) == (3, 0), body
        assert "kept_because" not in body
        assert _holding(es, alias) == []

        replayed = web.post("/v1/events?refresh=wait_for", json=events)
        assert replayed.status_code == 422, replayed.text
        reasons = {r["event_id"]: r.get("reason") for r in replayed.json()["results"]}
        assert reasons == dict.fromkeys(["c-0", "c-1", "c-2"], "scope erased")
    assert stored(es, alias, user_id="carol") == 0


def test_an_event_stored_after_the_erasure_took_stock_is_kept_and_said_so(
    es: Elasticsearch, alias: str
) -> None:
    at = Instant.now()
    old = Event.model_validate({**_carol(at)[0], "timestamp": Instant(at.nanos - _MINUTE)})
    assert all(w.result.stored for w in Writer(es, alias).write([Submission(old)]))
    new = Event.model_validate({**_carol(at)[2], "event_id": "c-new"})

    def store_new() -> None:  # right after the erasure took stock of what is stored
        assert all(w.result.stored for w in Writer(es, alias).write([Submission(new)]))

    hooked = HookedClient(es, after="open_point_in_time", hook=store_new)
    result = erase(hooked, alias, Scope.user("carol"), at=at)  # type: ignore[arg-type]

    assert hooked.fired
    assert (result.removed, result.kept) == (1, 1), result
    assert result.kept_because is not None and "new events" in result.kept_because
    assert stored(es, alias, event_id="c-new") == 1
    assert json.loads(result.model_dump_json())["kept"] == 1
