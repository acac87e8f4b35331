"""Erasure: every event of the scope goes, late retries and replays of them are
refused while the scope's new events are stored, and a live ingest of the same user
cannot bring anything back."""

import io
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.core.instant import Instant
from session_recall.indexer import (
    IngestSummary,
    Scope,
    WriterOptions,
    erase,
    ingest,
    read_stream,
)
from session_recall.indexer.chunking import FLUSH, Flush
from session_recall.indexer.lines import Line, LineRun
from session_recall.indexer.tombstones import erased_at, record
from session_recall.node import wait_until
from tests.support import native as native_core
from tests.support.ndjson import append_ndjson, event, ndjson, stored, write_ndjson
from tests.support.recording import RecordingClient

pytestmark = pytest.mark.integration


def _cli(es_url: str, alias: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, *args])
    return result.exit_code, result.output


def _events() -> list[dict]:
    alice = [
        event(i, user="alice", session=f"s{i % 2}", contact_id="c1", inbox_id="web")
        for i in range(40)
    ]
    bob = [
        event(100 + i, user="bob", session="s0", contact_id="c1", inbox_id="mail")
        for i in range(10)
    ]
    return alice + bob


@pytest.mark.parametrize(
    ("args", "removed", "left"),
    [
        (["--user", "alice"], 40, {"alice": 0, "bob": 10}),
        (["--user", "alice", "--session", "s0"], 20, {"alice": 20, "bob": 10}),
        (["--user", "bob", "--contact", "c1", "--inbox", "mail"], 10, {"alice": 40, "bob": 0}),
    ],
)
def test_delete_removes_the_scope_and_prints_the_count(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path, args, removed, left
):
    source = write_ndjson(tmp_path / "events.ndjson", _events())
    dead = str(tmp_path / "dead.ndjson")
    assert _cli(es_url, alias, "ingest", str(source), "--dead-letter", dead)[0] == 0

    code, output = _cli(es_url, alias, "delete", *args)

    assert code == 0, output
    assert output.startswith(f"Removed {removed} events of ")
    assert {user: stored(es, alias, user_id=user) for user in left} == left
    # A replay stores nothing of the erased scope and copies none of it anywhere; the
    # refusals are the erasure working, so the run still succeeds.
    code, output = _cli(es_url, alias, "ingest", str(source), "--dead-letter", dead)
    assert code == 0, output
    assert output.endswith(f"rejected {removed} ({removed} of an erased scope).\n"), output
    assert {user: stored(es, alias, user_id=user) for user in left} == left
    assert not Path(dead).exists()


def test_erasing_a_contact_leaves_the_same_contact_and_inbox_of_another_user(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    # Contact and inbox ids repeat across users (tenants): each is another customer.
    events = [
        event(i, user=user, session=f"{user}-s", contact_id="c-1", inbox_id="web")
        for user in ("acme", "globex")
        for i in range(5)
    ]
    source = write_ndjson(tmp_path / "events.ndjson", events)
    dead = str(tmp_path / "dead.ndjson")
    assert _cli(es_url, alias, "ingest", str(source), "--dead-letter", dead)[0] == 0

    code, output = _cli(
        es_url, alias, "delete", "--user", "acme", "--contact", "c-1", "--inbox", "web"
    )

    assert (code, output) == (
        0,
        "Removed 5 events of contact 'c-1' in inbox 'web' of user 'acme'.\n",
    )
    assert stored(es, alias, user_id="acme") == 0
    assert stored(es, alias, user_id="globex", contact_id="c-1", inbox_id="web") == 5
    # The tombstone covers acme's contact only: globex's replay is not refused.
    code, output = _cli(es_url, alias, "ingest", str(source), "--dead-letter", dead)
    assert code == 0, output
    assert "already present 5, rejected 5 (5 of an erased scope)" in output
    assert stored(es, alias, user_id="globex") == 5 and stored(es, alias, user_id="acme") == 0


def test_after_an_erasure_replays_are_refused_and_new_events_stored(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    source = write_ndjson(tmp_path / "events.ndjson", [event(i) for i in range(10)])
    dead = tmp_path / "dead.ndjson"
    assert _cli(es_url, alias, "ingest", str(source), "--dead-letter", str(dead))[0] == 0
    assert _cli(es_url, alias, "delete", "--user", "alice")[0] == 0
    # Stamped after the erasure (which started before `delete` returned): new events.
    after = Instant.now().nanos
    new = [event(100 + i, timestamp=Instant(after + i).isoformat()) for i in range(5)]
    append_ndjson(source, new)

    code, output = _cli(es_url, alias, "ingest", str(source), "--dead-letter", str(dead))

    assert code == 0, output
    assert output == "Read 15, indexed 5, already present 0, rejected 10 (10 of an erased scope).\n"
    assert stored(es, alias, user_id="alice") == 5
    assert not dead.exists()


def test_an_event_stamped_after_the_erasure_instant_goes_when_stored_before_it(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    # A producer clock ahead of this one: what is stored goes whatever its stamp, and
    # the replay of it is refused as well (its own tombstone, at its own stamp).
    ahead = event(1, timestamp="2030-01-01T00:00:00Z")
    source = write_ndjson(tmp_path / "events.ndjson", [event(0), ahead])
    dead = str(tmp_path / "dead.ndjson")
    ahead_ok = ("--max-ahead-seconds", str(10 * 365 * 86_400))  # accepted, for this test
    assert _cli(es_url, alias, "ingest", str(source), "--dead-letter", dead, *ahead_ok)[0] == 0
    assert _cli(es_url, alias, "delete", "--user", "alice") == (
        0,
        "Removed 2 events of user 'alice'.\n",
    )

    code, output = _cli(es_url, alias, "ingest", str(source), "--dead-letter", dead, *ahead_ok)

    assert code == 0, output
    assert "indexed 0, already present 0, rejected 2 (2 of an erased scope)" in output
    assert stored(es, alias, user_id="alice") == 0


@pytest.mark.parametrize("native_path", native_core.PATHS)
def test_a_refused_replay_never_deletes_a_newer_event_of_the_same_id(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path, monkeypatch, native_path: str
):
    """Erase at 11:00; `msg-1` stamped 12:00 is stored (after the erasure: kept); then
    `msg-1` stamped 10:00 comes (covered: refused). The 12:00 event must stay."""
    monkeypatch.setenv("SESSION_RECALL_NATIVE", native_path)
    record(es, alias, Scope.user("alice"), erased_at=Instant.parse("2026-07-01T11:00:00Z"))
    newer = {**event(1), "event_id": "msg-1", "timestamp": "2026-07-01T12:00:00Z"}
    older = {**event(2), "event_id": "msg-1", "timestamp": "2026-07-01T10:00:00Z"}
    dead = str(tmp_path / "dead.ndjson")
    assert _cli(es_url, alias, "ingest", str(write_ndjson(tmp_path / "a", [newer])),
                "--dead-letter", dead)[0] == 0  # fmt: skip

    code, output = _cli(
        es_url, alias, "ingest", str(write_ndjson(tmp_path / "b", [older])), "--dead-letter", dead
    )

    assert code == 0, output
    assert "rejected 1 (1 of an erased scope)" in output
    es.indices.refresh(index=alias)
    [hit] = es.search(index=alias, query={"term": {"event_id": "msg-1"}})["hits"]["hits"]
    assert hit["_source"]["timestamp"].startswith("2026-07-01T12:00:00")


def test_a_tombstone_only_moves_forward(es: Elasticsearch, alias: str):
    scope = Scope.user("alice")
    later, earlier = Instant.parse("2026-09-01T00:00:00Z"), Instant.parse("2026-08-01T00:00:00Z")
    record(es, alias, scope, erased_at=later)
    record(es, alias, scope, erased_at=earlier)  # an older erasure finishing last
    assert erased_at(es, alias, [scope.id]) == {scope.id: later.nanos}


def test_erasing_twice_is_harmless(es: Elasticsearch, es_url: str, alias: str):
    assert _cli(es_url, alias, "delete", "--user", "nobody") == (
        0,
        "Removed 0 events of user 'nobody'.\n",
    )
    assert _cli(es_url, alias, "delete", "--user", "nobody")[0] == 0


def _held_until(lines: Iterator[Any], count: int, release: Callable[[], bool]) -> Iterator[Any]:
    """The first `count` lines, then the rest once `release()` holds (an input gone
    quiet for a while, as a followed file can)."""
    for number, line in enumerate(lines):
        if number == count:
            assert wait_until(release, timeout=120), "the input was never released"
        yield line


def _as_runs(lines: Iterator[Line | Flush], size: int) -> Iterator[LineRun | Flush]:
    """The same lines, `size` at a time, as the blocks the native path reads."""
    group: list[Line] = []
    for line in [*lines, FLUSH]:
        if isinstance(line, Line):
            group.append(line)
        if group and (len(group) == size or isinstance(line, Flush)):
            first = group[0]
            data = b"".join(item.data + b"\n" for item in group)
            yield LineRun(data, 0, len(data), first.end - len(first.data) - 1, first.number - 1)
            group = []
        if isinstance(line, Flush):
            yield line


@pytest.mark.parametrize("native_path", native_core.PATHS)
def test_an_erasure_during_a_live_ingest_leaves_nothing_of_the_user(
    es: Elasticsearch, alias: str, tmp_path: Path, monkeypatch, native_path: str
):
    monkeypatch.setenv("SESSION_RECALL_NATIVE", native_path)
    runs = native_path == "1"  # line runs are what the native path reads
    total, before = 6_000, 1_000
    data = ndjson(event(i, user="victim" if i % 2 else "bystander") for i in range(total))
    # The erasure's client records its calls: the input holds its last 5,000 lines
    # until the erasure's first request, so the two surely overlap, and small chunks
    # keep the ingest running long after that.
    erasing = RecordingClient(es)
    options = WriterOptions(chunk_events=100)
    outcome: dict[str, IngestSummary | BaseException] = {}

    def run() -> None:
        source: Iterator[Any] = read_stream(io.BytesIO(data))
        if runs:  # a run of 10 lines counts as one
            source, hold = _as_runs(source, 10), before // 10
        else:
            hold = before
        lines = _held_until(source, hold, lambda: bool(erasing.calls))
        try:
            outcome["first"] = ingest(
                es, alias, lines, dead_letter=tmp_path / "d1", options=options
            )
        except BaseException as err:
            outcome["first"] = err

    live = threading.Thread(target=run)
    live.start()
    try:
        assert wait_until(lambda: stored(es, alias, user_id="victim") > 0, timeout=60)
        assert live.is_alive(), "the ingest finished before the erasure started"
        result = erase(erasing, alias, Scope.user("victim"))  # type: ignore[arg-type]
    finally:
        live.join(timeout=300)

    first = outcome["first"]
    assert isinstance(first, IngestSummary), first
    assert result.removed > 0
    assert first.rejected > 0, "no event was refused: the erasure did not overlap the ingest"
    assert first.erased == first.rejected and first.dead_lettered == 0
    assert stored(es, alias, user_id="victim") == 0
    assert stored(es, alias, user_id="bystander") == total // 2

    replay = ingest(
        es, alias, read_stream(io.BytesIO(data), runs=runs), dead_letter=tmp_path / "d2"
    )

    # Every event was stamped before the erasure started: the replay is all refused.
    assert replay.rejected == replay.erased == total // 2
    assert replay.already_present == total // 2
    assert stored(es, alias, user_id="victim") == 0
    assert not (tmp_path / "d1").exists() and not (tmp_path / "d2").exists()


def test_erasing_from_a_missing_alias_says_so(es_url: str):
    code, output = _cli(es_url, "t-no-such-alias_7b1e", "delete", "--user", "u")
    assert code == 3, output  # not set up
    assert "is not an alias" in output
