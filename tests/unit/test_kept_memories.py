"""The pure parts of kept memories: ids, the JSON a caller reads, the checks made
before any request, and how consolidation splits a user's events by slice."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.instant import Instant
from session_recall.core.kept_memories import Memory, memory_id
from session_recall.indexer.enrichment.consolidation import _ALL, _slice_of
from session_recall.indexer.enrichment.memories import MemoryRefused, MemoryWriter, SourceEvent
from session_recall.recall import (
    EmptyQuery,
    InvalidLimit,
    InvalidQuery,
    InvalidTypes,
    MemoriesSearcher,
)


def test_a_memory_id_is_the_same_for_the_same_conclusion_and_never_across_users():
    one = memory_id("alice", "decision", "Billing uses MySQL.", ["e-2", "e-1"])
    assert one == memory_id("alice", "decision", "Billing uses MySQL.", ["e-1", "e-2", "e-1"])
    assert one != memory_id("bob", "decision", "Billing uses MySQL.", ["e-1", "e-2"])
    # A tuple, never a joined string: these two would collide as "a/b" + "c".
    assert memory_id("a/b", "fact", "c", ["x"]) != memory_id("a", "fact", "b/c", ["x"])


def test_a_memory_reads_back_in_the_apis_names_without_its_user():
    memory = Memory.from_source(
        {"memory_id": "m1", "user_id": "alice", "kind": "decision", "statement": "MySQL.",
         "sources": ["e-1"], "valid_from": "2026-07-08T10:00:00.000000000Z",
         "origin": "agent", "stems": "mysql"}
    )  # fmt: skip
    document = json.loads(memory.model_dump_json())
    assert document == {
        "memoryId": "m1", "kind": "decision", "statement": "MySQL.", "subject": None,
        "sources": ["e-1"], "validFrom": "2026-07-08T10:00:00Z", "supersededBy": None,
        "validTo": None, "origin": "agent",
    }  # fmt: skip
    assert memory.current


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda s: s.search(""), InvalidQuery),
        (lambda s: s.search(",,,"), EmptyQuery),
        (lambda s: s.search("x" * 1001), InvalidQuery),
        (lambda s: s.search("billing", kinds=["opinion"]), InvalidTypes),
        (lambda s: s.search("billing", limit=0), InvalidLimit),
        (lambda s: s.list(page_size=501), InvalidLimit),
        (lambda s: s.list(kinds=["decision", "gossip"]), InvalidTypes),
    ],
)
def test_a_searchers_arguments_are_checked_before_any_request(call, error):
    searcher = MemoriesSearcher(None, user_id="alice", alias="ev")  # type: ignore[arg-type]
    with pytest.raises(error):
        call(searcher)


SOURCE = [SourceEvent("e-1", "doc-1", Instant.parse("2026-07-01T10:00:00Z"))]


@pytest.mark.parametrize(
    ("statement", "kind", "sources"),
    [
        ("", "fact", SOURCE),
        ("x" * 2001, "fact", SOURCE),
        ("Billing uses MySQL.", "opinion", SOURCE),
        ("Billing uses MySQL.", "fact", []),
    ],
)
def test_a_memory_is_refused_before_any_request(statement, kind, sources):
    writer = MemoryWriter(None, "ev", user_id="alice")  # type: ignore[arg-type]
    with pytest.raises(MemoryRefused):
        writer.save_resolved(statement, kind, sources)


@pytest.mark.parametrize("sources", [[], "e-1", [f"e-{n}" for n in range(51)], [""]])
def test_sources_are_a_short_list_of_event_ids(sources):
    writer = MemoryWriter(None, "ev", user_id="alice")  # type: ignore[arg-type]
    with pytest.raises(MemoryRefused):
        writer.save_memory("Billing uses MySQL.", "fact", sources)


@given(st.integers(0, (1 << 16) - 1))
def test_every_slot_is_in_the_one_slice_whose_slots_hold_it(slot: int):
    piece = _slice_of(slot)
    low, high = piece.slots
    assert low <= slot < high and piece in _ALL


def test_instants_keep_their_order_for_the_miner():
    from session_recall.indexer.enrichment.consolidation import _datetime

    early, late = (
        Instant.parse("2026-07-01T10:00:00.000001Z"),
        Instant.parse("2026-07-01T10:00:00.000002Z"),
    )
    assert _datetime(early) < _datetime(late)
