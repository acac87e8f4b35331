"""`session-recall ingest` against a real node: idempotence, dead letters, order."""

import random
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from tests.support.ndjson import duplicated_event_ids, event, stored, write_ndjson

pytestmark = pytest.mark.integration


def _ingest(es_url: str, alias: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, "ingest", *args])
    return result.exit_code, result.output


def test_ingesting_the_same_file_twice_stores_each_event_once(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    events = [event(i, user=f"u{i % 7}") for i in range(2_000)]
    del events[5]["event_id"]  # a derived id must be just as stable
    source = write_ndjson(tmp_path / "events.ndjson", events)
    dead = tmp_path / "dead.ndjson"

    first = _ingest(es_url, alias, str(source), "--dead-letter", str(dead))
    second = _ingest(es_url, alias, str(source), "--dead-letter", str(dead))

    assert first == (0, "Read 2000, indexed 2000, already present 0, rejected 0.\n")
    assert second == (0, "Read 2000, indexed 0, already present 2000, rejected 0.\n")
    assert stored(es, alias) == 2_000
    assert duplicated_event_ids(es, alias) == []
    assert not dead.exists(), "a clean run leaves no dead-letter file"


def test_1_percent_invalid_lines_go_to_the_dead_letter_file_and_the_rest_is_stored(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    # 10,000 lines: ten bulk chunks, each kind of invalid line 20 times over.
    broken = {
        0: lambda e: b"{not json",
        1: lambda e: orjson.dumps({**e, "timestamp": "2026-07-01T00:00:00"}),  # naive
        2: lambda e: orjson.dumps({k: v for k, v in e.items() if k != "user_id"}),
        3: lambda e: orjson.dumps({**e, "colour": "red"}),
        4: lambda e: orjson.dumps({**e, "session_id": ""}),
    }
    source = tmp_path / "events.ndjson"
    with source.open("wb") as out:
        for i in range(10_000):
            e = event(i, user=f"user-{i % 50}")
            line = broken[(i // 100) % 5](e) if i % 100 == 99 else orjson.dumps(e)
            out.write(line + b"\n")
    dead = tmp_path / "dead.ndjson"

    code, output = _ingest(es_url, alias, str(source), "--dead-letter", str(dead))

    assert code == 1, output
    assert output.startswith("Read 10000, indexed 9900, already present 0, rejected 100")
    assert str(dead) in output
    assert stored(es, alias) == 9_900
    letters = [orjson.loads(line) for line in dead.read_bytes().splitlines()]
    assert len(letters) == 100
    assert all(set(letter) == {"event", "reason"} and letter["reason"] for letter in letters)
    reasons = {letter["reason"].split(": ", 2)[1] for letter in letters}
    assert reasons >= {"not valid JSON", "timestamp", "session_id"}
    assert letters[0]["event"] == "{not json"
    assert letters[0]["reason"].startswith("line 100: not valid JSON")


def test_camel_and_snake_case_events_are_the_same_document(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    snake = event(1, contact_id="c1", inbox_id="i1", conversation_type="test")
    camel = {
        "eventId": "e-1",
        "userId": "alice",
        "sessionId": snake["session_id"],
        "contactId": "c1",
        "inboxId": "i1",
        "conversationType": "test",
        "timestamp": snake["timestamp"],
        "type": snake["type"],
        "text": snake["text"],
    }
    dead = str(tmp_path / "dead.ndjson")
    assert (
        _ingest(es_url, alias, str(write_ndjson(tmp_path / "c", [camel])), "--dead-letter", dead)[0]
        == 0
    )
    es.indices.refresh(index=alias)
    first = es.search(index=alias, routing="alice", seq_no_primary_term=True).body["hits"]["hits"]

    code, output = _ingest(
        es_url, alias, str(write_ndjson(tmp_path / "s", [snake])), "--dead-letter", dead
    )

    assert code == 0 and "already present 1" in output, output
    es.indices.refresh(index=alias)
    hits = es.search(index=alias, routing="alice", seq_no_primary_term=True).body["hits"]["hits"]
    assert hits == first
    assert hits[0]["_source"]["timestamp"] == "2026-07-01T00:00:00.001000001Z"


def test_fractional_seconds_keep_their_true_order(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    stamps = [
        "2026-07-01T12:00:00Z",
        "2026-07-01T12:00:00.000000001Z",
        "2026-07-01T12:00:00.5Z",
        "2026-07-01T14:00:00.75+02:00",
        "2026-07-01T12:00:01Z",
    ]
    events = [event(i, timestamp=stamp) for i, stamp in enumerate(stamps)]
    random.Random(3).shuffle(events)
    source = write_ndjson(tmp_path / "events.ndjson", events)

    assert _ingest(es_url, alias, str(source), "--dead-letter", str(tmp_path / "d"))[0] == 0

    es.indices.refresh(index=alias)
    hits = es.search(index=alias, routing="alice", sort=["timestamp"], source=["event_id"])
    assert [h["_source"]["event_id"] for h in hits["hits"]["hits"]] == [f"e-{i}" for i in range(5)]


def test_stdin_is_read_with_a_dash(es: Elasticsearch, es_url: str, alias: str, tmp_path: Path):
    data = b"".join(orjson.dumps(event(i)) + b"\n" for i in range(10))
    result = CliRunner().invoke(
        main,
        ["--es-url", es_url, "--index", alias, "ingest", "-", "--dead-letter", str(tmp_path / "d")],
        input=data,
    )
    assert result.exit_code == 0, result.output
    assert stored(es, alias) == 10


def test_a_missing_alias_stops_the_run_with_the_next_step(es_url: str, tmp_path: Path):
    source = write_ndjson(tmp_path / "events.ndjson", [event(1)])
    code, output = _ingest(
        es_url, "t-no-such-alias_3f9c", str(source), "--dead-letter", str(tmp_path / "d")
    )
    assert code == 3, output  # not set up; 1 would claim lines were dead-lettered
    assert "session-recall --index t-no-such-alias_3f9c setup" in output


def test_documents_elasticsearch_refuses_go_to_the_dead_letter_and_the_rest_is_stored(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    # A real refusal: the events' partition, made ahead of time, maps `type` as a number.
    es.indices.create(index=f"{alias}-2026.07", mappings={"properties": {"type": {"type": "long"}}})
    events = [event(1, type="7"), event(2, type="user_message"), event(3, type="8")]
    dead = tmp_path / "dead.ndjson"

    code, output = _ingest(
        es_url, alias, str(write_ndjson(tmp_path / "e", events)), "--dead-letter", str(dead)
    )

    assert code == 1, output
    assert "indexed 2, already present 0, rejected 1" in output
    (letter,) = [orjson.loads(line) for line in dead.read_bytes().splitlines()]
    assert letter["event"] == events[1]
    assert letter["reason"].startswith(
        "line 2: Elasticsearch refused it (400): document_parsing_exception"
    )


def test_a_refused_final_refresh_is_a_warning_and_the_run_still_succeeds(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    # A real refusal: a closed index behind the alias. The events go to their partition,
    # but refreshing the alias fails (as with an API key allowed to write only).
    es.indices.create(index=f"{alias}-closed", aliases={alias: {}})
    es.indices.close(index=f"{alias}-closed")
    source = write_ndjson(tmp_path / "events.ndjson", [event(i) for i in range(3)])

    dead = str(tmp_path / "dead.ndjson")
    result = CliRunner().invoke(
        main, ["--es-url", es_url, "--index", alias, "ingest", str(source), "--dead-letter", dead]
    )

    assert result.exit_code == 0, result.output
    assert result.stdout == "Read 3, indexed 3, already present 0, rejected 0.\n"
    # The enrichment pass after it meets the same index, and says what to do.
    warning, enriching = result.stderr.splitlines()
    assert enriching.startswith("Warning: the events are stored, but enriching them failed")
    assert warning.startswith("Warning: the events are stored, but the final refresh failed")
    assert "index_closed_exception" in warning
    assert "may take a second to become searchable" in warning
    es.indices.refresh(index=f"{alias}-2026.07")
    assert es.count(index=f"{alias}-2026.07")["count"] == 3
