"""An alias of the single-index layout (one index behind a write alias, as releases
before partitions made it) on a real node: readable after `setup`, then moved into
partitions by the documented commands (docs/operations.md), with nothing lost, nothing stored twice,
replays still stored once, the same recall pages, and erasure and the enrichment still
working. An interrupted move loses nothing and the next run finishes it."""

import os
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch, helpers

from session_recall.cli import main
from session_recall.core.instant import Instant
from session_recall.core.partitions import Granularity, partition_of
from session_recall.embeddings import StaticEmbedder, vector_field
from session_recall.indexer import (
    Event,
    Scope,
    Status,
    Submission,
    Writer,
    enrich,
    erase,
    to_document,
)
from session_recall.indexer.layout import stored_indices
from session_recall.indexer.migration import MoveSummary, move, plan
from session_recall.indexer.tombstones import record
from session_recall.indexer.vectors import with_vectors
from session_recall.mappings import mapping_update
from session_recall.recall import CrossSessionSearcher
from session_recall.templates import install, uninstall
from tests.support.elasticsearch import REPO
from tests.support.ndjson import duplicated_event_ids, stored, write_ndjson
from tests.support.pages import cursor_pages

pytestmark = pytest.mark.integration

MONTHS = ("2025-11", "2025-12", "2026-01", "2026-02")
USERS = ("alice", "bob")
COUNT = 240
KEY = b"migration-test-cursor-key-32byte"
EMBEDDER = StaticEmbedder(64)


def _events() -> list[dict]:
    """COUNT events over four months and two users, a session per user and month."""
    made = []
    for i in range(COUNT):
        month, user = MONTHS[i % len(MONTHS)], USERS[i // len(MONTHS) % len(USERS)]
        made.append(
            {
                "event_id": f"e-{i}",
                "user_id": user,
                "session_id": f"s-{user}-{month}",
                "timestamp": f"{month}-{1 + i % 28:02d}T{i % 24:02d}:00:{i % 60:02d}.000000001Z",
                "type": "user_message" if i % 2 else "assistant_message",
                "text": f"message {i} about the weather",
            }
        )
    return made


EVENTS = _events()


@pytest.fixture
def legacy_alias(es: Elasticsearch) -> Iterator[str]:
    """An alias as a release before partitions left it: its template (every
    `ALIAS-*`, no partition period), `ALIAS-000001` as the write index, and the
    events stored there by id, routed by user, with their vectors."""
    alias = f"t-migrate_{uuid.uuid4().hex[:8]}"
    mappings = {"dynamic": "strict", "_routing": {"required": True}, **mapping_update()}
    es.indices.put_index_template(
        name=alias, index_patterns=[f"{alias}-*"], priority=200, template={"mappings": mappings}
    )
    legacy = f"{alias}-000001"
    es.indices.create(index=legacy, aliases={alias: {"is_write_index": True}})
    try:
        events = [Event(**e) for e in EVENTS]
        documents, error = with_vectors(
            EMBEDDER, [to_document(e, index=legacy) for e in events], [e.text for e in events]
        )
        assert error is None
        actions = [{**d.header["create"], "_source": orjson.loads(d.body)} for d in documents]
        helpers.bulk(es, actions)
        es.indices.refresh(index=legacy)
        yield alias
    finally:
        uninstall(es, alias)


def _cli(es_url: str, alias: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, *args], env=env)
    return result.exit_code, result.output


def _readme_move() -> str:
    """The documented commands for moving from the single-index layout, as written."""
    text = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
    section = text.split("## Moving from the single-index layout", 1)[1].split("\n#", 1)[0]
    (block,) = re.findall(r"^```sh\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    return block


def _pages(es: Elasticsearch, alias: str) -> dict[str, list[list[dict]]]:
    """Every user's recall, page by page, each item as served."""
    pages = {}
    for user in USERS:
        searcher = CrossSessionSearcher(es, alias=alias, user_id=user, cursor_key=KEY, page_size=7)
        ids = cursor_pages(searcher, "weather")
        since = searcher.search("weather", since="2026-01-01T00:00:00Z")
        pages[user] = [*ids, [item.model_dump() for item in since.items]]
    return pages


def _by_partition(alias: str, period: Granularity = "month") -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in EVENTS:
        index = partition_of(alias, Instant.parse(e["timestamp"]), period).index
        counts[index] = counts.get(index, 0) + 1
    return counts


def _outside_their_partition(es: Elasticsearch, alias: str) -> int:
    """Events stored in a partition whose period does not hold their timestamp."""
    wrong = 0
    for item in stored_indices(es, alias):
        assert item.partition is not None, f"{item.index} is no partition"
        period = {
            "gte": item.partition.start.to_elasticsearch(),
            "lt": item.partition.end.to_elasticsearch(),
        }
        query = {"bool": {"must_not": [{"range": {"timestamp": period}}]}}
        wrong += int(es.count(index=item.index, query=query)["count"])
    return wrong


def _stored_ids(es: Elasticsearch, alias: str) -> list[tuple[str, str]]:
    es.indices.refresh(index=alias)
    hits = helpers.scan(
        es, index=alias, query={"query": {"match_all": {}}}, _source=["user_id", "event_id"]
    )
    return sorted((h["_source"]["user_id"], h["_source"]["event_id"]) for h in hits)


ALL_IDS = sorted((e["user_id"], e["event_id"]) for e in EVENTS)


def test_an_alias_of_the_single_index_layout_moves_into_partitions_by_the_readme(
    es: Elasticsearch, es_url: str, legacy_alias: str, tmp_path: Path
):
    alias, legacy = legacy_alias, f"{legacy_alias}-000001"
    source = write_ndjson(tmp_path / "original.ndjson", EVENTS)
    before = _pages(es, alias)
    assert sum(len(page) for pages in before.values() for page in pages[:-1]) == COUNT

    # After `setup`, the old index is read through the alias with the partitions.
    code, output = _cli(es_url, alias, "setup")
    assert code == 0, output
    assert f"Also read through the alias: {legacy}" in output and "migrate" in output
    assert _pages(es, alias) == before
    code, listing = _cli(es_url, alias, "partitions")
    assert code == 0, listing
    row = next(line for line in listing.splitlines() if line.startswith(f"{legacy} "))
    assert row.split()[1:4] == ["-", "-", str(COUNT)]

    env = {**os.environ, "ELASTICSEARCH_URL": es_url, "SESSION_RECALL_INDEX": alias}
    env.pop("SESSION_RECALL_TOKEN", None)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", _readme_move()],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert f"Would move {COUNT} event(s) from 1 index(es); nothing was changed" in done.stdout
    assert f"{legacy}: {COUNT} event(s); {COUNT} copied, 0 already" in done.stdout
    assert "; deleted." in done.stdout

    # Every event in the partition its timestamp names, once, with its vectors.
    assert not es.indices.exists(index=legacy)
    filled = {s.index: s.docs for s in stored_indices(es, alias) if s.docs}
    assert filled == _by_partition(alias)  # and the current month's, empty, from `setup`
    assert _outside_their_partition(es, alias) == 0
    assert stored(es, alias) == COUNT and duplicated_event_ids(es, alias) == []
    assert _stored_ids(es, alias) == ALL_IDS
    vectors = {"exists": {"field": vector_field(EMBEDDER.model_id)}}
    assert es.count(index=alias, query=vectors)["count"] == COUNT

    # Replays stay exact, recall serves the same pages, the enrichment spans partitions.
    replay = _cli(es_url, alias, "ingest", str(source))
    assert replay == (0, f"Read {COUNT}, indexed 0, already present {COUNT}, rejected 0.\n")
    assert _pages(es, alias) == before
    # The replay's enrichment pass added stems and context; the moved vectors were kept.
    assert enrich(es, alias, EMBEDDER).missing == 0
    other = StaticEmbedder(128)
    code, output = _cli(es_url, alias, "embed", env={"SESSION_RECALL_EMBEDDINGS_DIMS": "128"})
    assert (code, output) == (
        0,
        f"{COUNT} event(s) awaited enrichment (stems, context, vectors of {other.model_id}); "
        f"{COUNT} enriched.\n",
    )
    vectors = {"exists": {"field": vector_field(other.model_id)}}
    for index, count in _by_partition(alias).items():
        assert es.count(index=index, query=vectors)["count"] == count

    # Erasure still works, and a replay of the erased session is refused.
    session = Scope.session("bob", "s-bob-2025-12")
    erased = [e for e in EVENTS if e["session_id"] == "s-bob-2025-12"]
    assert erase(es, alias, session).removed == len(erased) > 0
    replay = _cli(es_url, alias, "ingest", str(source))
    assert replay[0] == 0
    assert f"indexed 0, already present {COUNT - len(erased)}" in replay[1]
    assert stored(es, alias) == COUNT - len(erased)
    assert stored(es, alias, session_id="s-bob-2025-12") == 0


class _Interrupted(Exception):
    pass


def test_a_move_interrupted_half_way_loses_nothing_and_the_next_run_finishes(
    es: Elasticsearch, legacy_alias: str
):
    alias, legacy = legacy_alias, f"{legacy_alias}-000001"
    install(es, alias)
    # Replayed since `setup`: stored a second time, in their partitions, until the move.
    replayed = EVENTS[:30]
    written = list(Writer(es, alias).write(Submission(Event(**e)) for e in replayed))
    assert all(w.result.status is Status.INDEXED for w in written)

    def stop_after_the_first_page(summary: MoveSummary) -> None:
        raise _Interrupted(summary.done)

    with pytest.raises(_Interrupted):
        move(es, alias, page_size=50, on_progress=stop_after_the_first_page)

    # Each event is in the old index or in its partition (or both), never in neither;
    # what was moved left the old index.
    assert sorted(set(_stored_ids(es, alias))) == ALL_IDS
    assert stored(es, legacy) == COUNT - 50

    (summary,) = move(es, alias, page_size=50)
    assert summary.deleted and summary.left == 0 and summary.failed == 0
    assert summary.copied + summary.present == COUNT - 50
    assert not es.indices.exists(index=legacy)
    assert _stored_ids(es, alias) == ALL_IDS
    assert duplicated_event_ids(es, alias) == []
    assert _outside_their_partition(es, alias) == 0
    assert move(es, alias) == [], "nothing left to move"


def test_the_move_is_shown_before_it_is_made_and_drops_what_was_erased(
    es: Elasticsearch, es_url: str, legacy_alias: str
):
    alias, legacy = legacy_alias, f"{legacy_alias}-000001"
    code, refused = _cli(es_url, alias, "migrate")
    assert code == 3, refused
    assert f"Run `session-recall --index {alias} setup` first." in refused
    assert _cli(es_url, alias, "setup")[0] == 0

    code, shown = _cli(es_url, alias, "migrate")
    assert code == 0, shown
    into = ", ".join(f"{index} ({n})" for index, n in sorted(_by_partition(alias).items()))
    assert f"{legacy}: {COUNT} event(s) into {into}" in shown
    assert stored(es, legacy) == COUNT, "nothing was changed"

    # An erasure whose tombstone was written but whose deletes never reached the old
    # index (it stopped half-way): the move drops the events it covers.
    session = Scope.session("alice", "s-alice-2026-01")
    covered = [e for e in EVENTS if e["session_id"] == "s-alice-2026-01"]
    record(es, alias, session, erased_at=Instant.now())
    code, moved = _cli(es_url, alias, "migrate", "--yes")
    assert code == 0, moved
    assert f"{len(covered)} of erased scopes dropped; deleted." in moved
    assert stored(es, alias) == COUNT - len(covered)
    assert stored(es, alias, session_id="s-alice-2026-01") == 0


@pytest.mark.parametrize("period", ["week", "year"])
def test_events_move_into_the_partitions_of_the_alias_period(
    es: Elasticsearch, legacy_alias: str, period: Granularity
):
    alias = legacy_alias
    install(es, alias, granularity=period)
    expected = _by_partition(alias, period)

    (shown,) = plan(es, alias)
    assert (shown.events, shown.partitions) == (COUNT, expected)
    (summary,) = move(es, alias)

    assert (summary.copied, summary.deleted) == (COUNT, True)
    assert {s.index: s.docs for s in stored_indices(es, alias) if s.docs} == expected
    assert _outside_their_partition(es, alias) == 0


def test_an_event_written_to_the_old_index_during_the_move_keeps_it_until_the_next_run(
    es: Elasticsearch, legacy_alias: str
):
    alias, legacy = legacy_alias, f"{legacy_alias}-000001"
    install(es, alias)
    late = Event(**{**EVENTS[0], "event_id": "late", "text": "late weather"})
    # What a process of the earlier release still running does: write to the old index.
    doc = to_document(late, index=legacy)
    wrote: list[int] = []

    def an_old_writer_meanwhile(summary: MoveSummary) -> None:
        if not wrote:
            wrote.append(summary.done)
            es.create(index=legacy, id=doc.id, routing=doc.routing, document=orjson.loads(doc.body))

    (first,) = move(es, alias, page_size=100, on_progress=an_old_writer_meanwhile)
    assert (first.deleted, first.left, first.copied) == (False, 1, COUNT)
    assert first.line().endswith("kept with 1 event(s): run the move again.")

    (second,) = move(es, alias)
    assert (second.deleted, second.copied) == (True, 1)
    assert _stored_ids(es, alias) == sorted([*ALL_IDS, ("alice", "late")])
