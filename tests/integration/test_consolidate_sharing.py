"""Consolidators share an alias: two of them mine each event once, by leases; serve
mines in the background only when asked (`--consolidate`)."""

import threading

import pytest
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.core.index_names import lease_index, memory_index
from session_recall.core.instant import Instant
from session_recall.http import create_app
from session_recall.indexer import Event, Submission, Writer
from session_recall.indexer.enrichment.consolidation import ConsolidationSummary, Consolidator
from session_recall.indexer.enrichment.leases import Leased
from tests.support.memories import mined_memories

pytestmark = pytest.mark.integration


def _remembered(n: int, user: str) -> Event:
    return Event(event_id=f"{user}-{n}", user_id=user, session_id=f"s{n}",
                 timestamp=Instant.parse(f"2026-07-01T10:00:{n:02d}Z"), type="user_message",
                 text=f"Please remember that locker {n} is mine.")  # fmt: skip


def _store(es: Elasticsearch, alias: str, events: list[Event]) -> None:
    """Stored as ingest stores them: each with its session's slot, by which the work is
    shared."""
    assert all(w.result.stored for w in Writer(es, alias).write(map(Submission, events)))
    es.indices.refresh(index=alias)


def _memories(es: Elasticsearch, alias: str) -> int:
    es.indices.refresh(index=memory_index(alias))
    return int(es.count(index=memory_index(alias))["count"])


def test_two_consolidators_mine_each_event_once(es: Elasticsearch, alias: str) -> None:
    users = [f"u{k}" for k in range(4)]
    _store(es, alias, [_remembered(n, user) for user in users for n in range(12)])
    first, second = (
        Consolidator(es, alias, leases=Leased(es, alias, work="consolidation")) for _ in range(2)
    )
    # Both are members before either pass: each takes its half of the slices (once the
    # memberships are searchable, as they are within a second between passes).
    for consolidator in (first, second, first, second):
        assert consolidator._leases is not None
        consolidator._leases.take()
        es.indices.refresh(index=lease_index(alias))
    summaries: list[ConsolidationSummary] = []
    threads = [threading.Thread(target=lambda c=c: summaries.append(c.run()))
               for c in (first, second)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for consolidator in (first, second):
        consolidator.leave()
    assert len(summaries) == 2
    assert all(s.events > 0 for s in summaries), summaries  # the work was shared
    assert sum(s.events for s in summaries) == 48  # each event mined once
    assert sum(s.saved for s in summaries) == 48 == _memories(es, alias)
    # Whoever mines next finds nothing new.
    again = Consolidator(es, alias, leases=Leased(es, alias, work="consolidation"))
    try:
        assert again.run().events == 0
    finally:
        again.leave()


def test_serve_mines_in_the_background_only_when_asked(
    es: Elasticsearch, settings: Settings
) -> None:
    events = [_remembered(n, "alice").model_dump(mode="json") for n in range(3)]
    with TestClient(create_app(settings, enrich=False)) as web:
        assert web.post("/v1/events?refresh=wait_for", json=events).status_code == 200
        assert web.get("/v1/users/alice/memories").json()["memories"] == []
    with TestClient(create_app(settings, enrich=False, consolidate=True)) as web:
        found = mined_memories(web, "alice", 3)
    assert sorted(m["sources"][0] for m in found) == ["alice-0", "alice-1", "alice-2"]
    assert {m["kind"] for m in found} == {"instruction"}
