"""Kept memories through the library: saved with checked sources, superseded as
history, searched and listed for their own user alone."""

import pytest
from elasticsearch import Elasticsearch

from session_recall.core.index_names import memory_index
from session_recall.embeddings import StaticEmbedder
from session_recall.indexer import Scope, erase
from session_recall.indexer.enrichment.memories import MemoryNotFound, MemoryRefused, MemoryWriter
from session_recall.recall import InvalidTypes, MemoriesSearcher
from tests.support.events import event, write_events
from tests.support.hooked import HookedClient

pytestmark = pytest.mark.integration

KEY = b"k" * 32


def _events(es: Elasticsearch, alias: str) -> None:
    write_events(
        es,
        alias,
        [
            event("a-1", user_id="alice", session_id="s1", timestamp="2026-07-01T10:00:00Z",
                  text="We decided to use PostgreSQL for billing"),
            event("a-2", user_id="alice", session_id="s2", timestamp="2026-07-08T10:00:00Z",
                  text="Actually, let's go with MySQL for billing"),
            event("a-3", user_id="alice", session_id="s2", timestamp="2026-07-08T10:01:00Z",
                  text="I prefer short answers"),
            event("b-1", user_id="bob", session_id="s1", timestamp="2026-07-02T10:00:00Z",
                  text="We decided to use Oracle for billing"),
        ],
    )  # fmt: skip


def _writer(es: Elasticsearch, alias: str, user: str) -> MemoryWriter:
    return MemoryWriter(es, alias, user_id=user, embedder=StaticEmbedder())


def _searcher(es: Elasticsearch, alias: str, user: str) -> MemoriesSearcher:
    return MemoriesSearcher(
        es, user_id=user, alias=alias, embedder=StaticEmbedder(), cursor_key=KEY
    )


def test_a_saved_memory_is_found_and_a_superseded_one_kept_as_history(
    es: Elasticsearch, alias: str
) -> None:
    _events(es, alias)
    alice = _writer(es, alias, "alice")
    old = alice.save_memory("Billing uses PostgreSQL.", "decision", ["a-1"], subject="billing db")
    new = alice.save_memory(
        "Billing uses MySQL.", "decision", ["a-2"], supersedes=old.memory.memory_id
    )
    assert new.created and new.superseded == [old.memory.memory_id]
    assert str(new.memory.valid_from) == "2026-07-08T10:00:00Z"

    found = _searcher(es, alias, "alice").search("which database for billing")
    assert [m.statement for m in found.memories] == ["Billing uses MySQL."]
    assert found.memories[0].sources == ["a-2"] and found.memories[0].superseded_by is None
    history = _searcher(es, alias, "alice").search(
        "which database for billing", include_superseded=True
    )
    assert [m.statement for m in history.memories] == [
        "Billing uses MySQL.",
        "Billing uses PostgreSQL.",
    ]
    assert history.memories[1].superseded_by == new.memory.memory_id
    assert str(history.memories[1].valid_to) == "2026-07-08T10:00:00Z"

    again = alice.save_memory("Billing uses MySQL.", "decision", ["a-2"])
    assert not again.created and again.memory.memory_id == new.memory.memory_id
    es.indices.refresh(index=memory_index(alias))
    assert es.count(index=memory_index(alias))["count"] == 2


def test_sources_must_be_the_users_own_events(es: Elasticsearch, alias: str) -> None:
    _events(es, alias)
    alice = _writer(es, alias, "alice")
    for sources in (["nope"], ["b-1"], ["a-1", "b-1"], []):
        with pytest.raises(MemoryRefused) as refused:
            alice.save_memory("Billing uses Oracle.", "decision", sources)
        assert "event" in str(refused.value)
    with pytest.raises(MemoryRefused, match="kind"):
        alice.save_memory("Billing uses MySQL.", "opinion", ["a-2"])
    bobs = _writer(es, alias, "bob").save_memory("Billing uses Oracle.", "decision", ["b-1"])
    # Another user's memory can be neither superseded nor retired.
    with pytest.raises(MemoryNotFound):
        alice.save_memory("x", "fact", ["a-1"], supersedes=bobs.memory.memory_id)
    with pytest.raises(MemoryNotFound):
        alice.retire_memory(bobs.memory.memory_id, "mine now")
    es.indices.refresh(index=memory_index(alias))
    assert es.count(index=memory_index(alias))["count"] == 1


def test_memories_are_never_another_users(es: Elasticsearch, alias: str) -> None:
    _events(es, alias)
    _writer(es, alias, "alice").save_memory("Billing uses MySQL.", "decision", ["a-2"])
    _writer(es, alias, "bob").save_memory("Billing uses Oracle.", "decision", ["b-1"])
    for user, statement in (("alice", "Billing uses MySQL."), ("bob", "Billing uses Oracle.")):
        searcher = _searcher(es, alias, user)
        found = searcher.search("billing Oracle MySQL", include_superseded=True)
        assert [m.statement for m in found.memories] == [statement]
        listed = searcher.list(include_superseded=True)
        assert [m.statement for m in listed.memories] == [statement]


def test_list_pages_newest_first_and_filters_kinds(es: Elasticsearch, alias: str) -> None:
    _events(es, alias)
    alice = _writer(es, alias, "alice")
    first = alice.save_memory("Billing uses PostgreSQL.", "decision", ["a-1"])
    alice.save_memory("Billing uses MySQL.", "decision", ["a-2"], supersedes=first.memory.memory_id)
    alice.save_memory("Alice prefers short answers.", "preference", ["a-3"])
    searcher = _searcher(es, alias, "alice")
    seen, cursor = [], None
    while True:
        page = searcher.list(include_superseded=True, page_size=1, cursor=cursor)
        seen += [m.statement for m in page.memories]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == [
        "Alice prefers short answers.",
        "Billing uses MySQL.",
        "Billing uses PostgreSQL.",
    ]
    kinds = searcher.list(kinds=["preference"]).memories
    assert [m.kind for m in kinds] == ["preference"]
    assert [m.statement for m in searcher.list().memories if m.kind == "decision"] == [
        "Billing uses MySQL."
    ]
    with pytest.raises(InvalidTypes):
        searcher.list(kinds=["opinion"])


def test_a_retired_memory_is_history(es: Elasticsearch, alias: str) -> None:
    _events(es, alias)
    alice = _writer(es, alias, "alice")
    saved = alice.save_memory("Alice prefers short answers.", "preference", ["a-3"])
    retired = alice.retire_memory(saved.memory.memory_id, "she changed her mind")
    assert retired.valid_to is not None and retired.retired == "she changed her mind"
    searcher = _searcher(es, alias, "alice")
    assert searcher.list().memories == []
    assert [m.retired for m in searcher.list(include_superseded=True).memories] == [
        "she changed her mind"
    ]


def test_a_source_erased_while_the_memory_is_saved_takes_it_too(
    es: Elasticsearch, alias: str
) -> None:
    """The erasure runs between the check of the sources and the write: it cannot see
    the memory yet, so the save sees its source gone, removes the memory and says so."""
    _events(es, alias)
    hooked = HookedClient(
        es, after="search", hook=lambda: erase(es, alias, Scope.event("alice", "a-3"))
    )
    writer = MemoryWriter(hooked, alias, user_id="alice")  # type: ignore[arg-type]
    with pytest.raises(MemoryRefused, match="erased"):
        writer.save_memory("Alice prefers short answers.", "preference", ["a-3"])
    assert hooked.fired
    es.indices.refresh(index=memory_index(alias))
    assert es.count(index=memory_index(alias))["count"] == 0
