"""One event erased by its id, on every surface: `DELETE /v1/users/{user}/events/{event}`
and `session-recall delete --event`. Every copy of the id goes, and its tombstone keeps
replays of it out on both write paths (`ingest`'s native core and `serve`'s Python
path), while the user's other events, and a new event stamped after the erasure that
reuses the id, are stored."""

import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.http import create_app
from session_recall.indexer import Event, Scope, Submission, Writer, tombstone_index
from session_recall.indexer.scope import ALL_MARKED, ANY_EVENT_ERASED, events_marker
from tests.support import native as native_core
from tests.support.ndjson import event, stored, write_ndjson

pytestmark = pytest.mark.integration


def _cli(es_url: str, alias: str, *args: str) -> Result:
    return CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, *args])


def _ids(es: Elasticsearch, alias: str) -> list[str]:
    es.indices.refresh(index=alias)
    hits = es.search(index=alias, query={"term": {"user_id": "alice"}}, size=50)["hits"]["hits"]
    return sorted(hit["_source"]["event_id"] for hit in hits)


def test_an_erased_event_goes_and_its_replays_stay_out_on_every_path(
    es: Elasticsearch, es_url: str, alias: str, settings: Settings, tmp_path: Path
) -> None:
    events = [event(i, session="s") for i in range(4)]
    source = write_ndjson(tmp_path / "events.ndjson", events)
    assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0
    assert _ids(es, alias) == ["e-0", "e-1", "e-2", "e-3"]

    with TestClient(create_app(settings, enrich=False)) as web:
        removed = web.delete("/v1/users/alice/events/e-1")
        assert removed.status_code == 200, removed.text
        assert removed.json()["removed"] == 1
        assert removed.json()["scope"]["kind"] == "event"
        by_cli = _cli(es_url, alias, "delete", "--user", "alice", "--event", "e-2")
        assert by_cli.exit_code == 0, by_cli.output
        assert "Removed 1 copy of event 'e-2' of user 'alice'." in by_cli.output
        assert _ids(es, alias) == ["e-0", "e-3"]

        # Replays: through serve (the Python path) and ingest (the native core).
        replayed = web.post("/v1/events?refresh=wait_for", json=events)
        assert replayed.status_code == 422, replayed.text
        reasons = {r["event_id"]: r.get("reason") for r in replayed.json()["results"]}
        assert reasons == {"e-0": None, "e-1": "scope erased", "e-2": "scope erased", "e-3": None}
    again = _cli(es_url, alias, "ingest", str(source), "--no-enrich")
    assert again.exit_code == 0, again.output
    assert "2 of an erased scope" in again.output
    assert _ids(es, alias) == ["e-0", "e-3"]

    # A new event stamped after the erasure is another event, even with that id.
    later = {**events[1], "timestamp": "2099-01-01T00:00:00Z"}
    later_source = write_ndjson(tmp_path / "later.ndjson", [later])
    stored_later = _cli(es_url, alias, "ingest", str(later_source), "--no-enrich",
                        "--max-ahead-seconds", str(80 * 365 * 86400))  # fmt: skip
    assert stored_later.exit_code == 0, stored_later.output
    assert stored(es, alias, event_id="e-1") == 1


def test_the_event_option_takes_no_other_scope(es_url: str, alias: str) -> None:
    mixed = _cli(es_url, alias, "delete", "--user", "alice", "--event", "e", "--session", "s")
    assert mixed.exit_code == 2
    assert "--event" in mixed.output


@pytest.mark.parametrize(
    "extra",
    [("--contact", "c1", "--inbox", "web"), ("--contact", "c1"), ("--inbox", "web")],
    ids=["contact-and-inbox", "contact", "inbox"],
)
def test_the_event_option_with_a_contact_is_refused_and_erases_nothing(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path, extra: tuple[str, ...]
) -> None:
    """`--event` names one event: with `--contact` and `--inbox` it must not fall through
    to the contact's scope and erase every event of the contact."""
    events = [event(i, session="s", contact_id="c1", inbox_id="web") for i in range(2)]
    source = write_ndjson(tmp_path / "contact.ndjson", events)
    assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0
    mixed = _cli(es_url, alias, "delete", "--user", "alice", "--event", "e-0", *extra)
    assert mixed.exit_code == 2, mixed.output
    assert "--event" in mixed.output and "Removed" not in mixed.output
    assert _ids(es, alias) == ["e-0", "e-1"]


def test_the_copies_of_one_event_are_counted_as_copies(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
) -> None:
    again = {**event(1, session="s"), "timestamp": "2026-07-01T00:00:09Z"}  # e-1, later
    source = write_ndjson(tmp_path / "copies.ndjson", [event(1, session="s"), again])
    assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0
    assert stored(es, alias, event_id="e-1") == 2
    dry = _cli(es_url, alias, "delete", "--user", "alice", "--event", "e-1", "--dry-run")
    assert "Would remove 2 copies of event 'e-1' of user 'alice'" in dry.output, dry.output
    erased = _cli(es_url, alias, "delete", "--user", "alice", "--event", "e-1")
    assert erased.output == "Removed 2 copies of event 'e-1' of user 'alice'.\n", erased.output


# --- per-batch tombstone reads, and tombstones of a release that wrote no markers -------


def _replay(path: str, es: Elasticsearch, es_url: str, settings: Settings, source: Path) -> None:
    """Send the events of `source` again, by one of the write paths."""
    lines = source.read_bytes()
    if path.startswith("ingest"):
        native = "1" if path == "ingest-native" else "0"
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SESSION_RECALL_NATIVE", native)
            done = _cli(es_url, settings.index, "ingest", str(source), "--no-enrich")
        assert done.exit_code == 0, done.output
    elif path.startswith("serve"):
        ndjson = path == "serve-ndjson"  # native batches; a JSON body takes the Python path
        body = lines if ndjson else b"[" + b",".join(lines.splitlines()) + b"]"
        kind = "application/x-ndjson" if ndjson else "application/json"
        with TestClient(create_app(settings, enrich=False)) as web:
            answer = web.post("/v1/events", content=body, headers={"content-type": kind})
        assert answer.status_code in (200, 201, 422), answer.text
    else:  # the library's writer
        events = [Event.model_validate_json(line) for line in lines.splitlines()]
        assert all(
            w.result.status for w in Writer(es, settings.index).write(map(Submission, events))
        )


PATHS = [
    pytest.param("ingest-native", marks=native_core.needs_core),
    "ingest-python",
    "serve-ndjson",
    "serve-json",
    "library",
]


def _tombstone_gets(es: Elasticsearch, alias: str) -> int:
    """Documents the tombstone index has served by id (each `mget` id counts one)."""
    stats = es.indices.stats(index=tombstone_index(alias), metric="get")
    return int(stats["_all"]["total"]["get"]["total"])


@pytest.mark.parametrize("path", PATHS)
def test_after_an_event_is_erased_a_replay_keeps_it_out_and_others_cost_no_read_per_event(
    es: Elasticsearch, es_url: str, alias: str, settings: Settings, tmp_path: Path, path: str
) -> None:
    """Once an event is erased on its own, a write asks for the own tombstones of that
    user's events only: a replay of them keeps the erased one out, on every write
    path, and another user's events cost the tombstone index a few reads a batch,
    not one per event."""
    alice = [event(i, session="s") for i in range(4)]
    source = write_ndjson(tmp_path / "alice.ndjson", alice)
    assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0
    assert _cli(es_url, alias, "delete", "--user", "alice", "--event", "e-1").exit_code == 0

    _replay(path, es, es_url, settings, source)
    assert _ids(es, alias) == ["e-0", "e-2", "e-3"]

    bob = [event(i, user="bob", session=f"s-{i % 3}") for i in range(600)]
    others = write_ndjson(tmp_path / "bob.ndjson", bob)
    before = _tombstone_gets(es, alias)
    _replay(path, es, es_url, settings, others)
    assert stored(es, alias, user_id="bob") == 600
    # A read per chunk before and after its bulk, each of a few ids (a user, three
    # sessions, the markers): 600 events asked one by one would be 1,200.
    assert _tombstone_gets(es, alias) - before < 100


def test_tombstones_of_a_release_that_wrote_no_markers_keep_replays_out_and_get_them(
    es: Elasticsearch, es_url: str, alias: str, settings: Settings, tmp_path: Path
) -> None:
    """An event erased by an earlier release has its own tombstone and the alias-wide
    one, but no marker of its user: writers ask for every event's own tombstone until
    the next erasure of an event gives each its user's marker."""
    index = tombstone_index(alias)
    assert es.indices.exists(index=index)  # made by setup
    stamp = Instant(time.time_ns()).to_elasticsearch()
    old = Scope.event("alice", "e-1")
    es.index(index=index, id=ANY_EVENT_ERASED, document={"kind": "event", "erased_at": stamp})
    es.index(
        index=index, id=old.id, document={**old.model_dump(exclude_none=True), "erased_at": stamp}
    )
    events = [event(i, session="s") for i in range(4)]
    source = write_ndjson(tmp_path / "events.ndjson", events)
    # ingest's native path where it can be had, and serve's Python path.
    paths = ("ingest-native" if native_core.ingest_setting() == "1" else "ingest-python",
             "serve-json")  # fmt: skip
    for path in paths:
        _replay(path, es, es_url, settings, source)
        assert _ids(es, alias) == ["e-0", "e-2", "e-3"]

    assert _cli(es_url, alias, "delete", "--user", "alice", "--event", "e-2").exit_code == 0
    found = es.mget(index=index, ids=[ALL_MARKED, events_marker(Scope.user("alice").id)])
    assert [doc["found"] for doc in found["docs"]] == [True, True]
    for path in paths:
        _replay(path, es, es_url, settings, source)
        assert _ids(es, alias) == ["e-0", "e-3"]
