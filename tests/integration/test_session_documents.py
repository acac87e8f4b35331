"""Session documents against a real node: the enrichment pass keeps one per session of
a user, every erasure rebuilds or removes it before it returns, and it is never
another user's. (That no erased word is left in one, whatever the order of stores,
passes and erasures, is `test_erasure_context`'s: its `sources` reads them too.)"""

from collections.abc import Sequence
from typing import Any

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.core.index_names import session_index
from session_recall.core.instant import Instant
from session_recall.embeddings import StaticEmbedder
from session_recall.indexer import Event, Scope, Submission, Writer, enrich, erase
from session_recall.indexer.enrichment.session_documents import document_id
from session_recall.recall import Searchers

pytestmark = pytest.mark.integration

KEY = b"session-documents-test-cursorkey"
START = Instant.parse("2026-05-01T10:00:00Z").nanos


def _store(
    es: Elasticsearch, alias: str, turns: Sequence[tuple[str, str, str, str]], *, first: int = 0
) -> None:
    """(user, session, event id, text) turns, a second apart from `first` seconds on,
    stored and refreshed."""
    events = [
        Event(event_id=event_id, user_id=user, session_id=session, type="user_message",
              text=text, timestamp=Instant(START + n * 10**9))
        for n, (user, session, event_id, text) in enumerate(turns, start=first)
    ]  # fmt: skip
    assert all(w.result.stored for w in Writer(es, alias).write(map(Submission, events)))
    es.indices.refresh(index=alias)


def _documents(es: Elasticsearch, alias: str) -> dict[tuple[str, str], dict[str, Any]]:
    index = session_index(alias)
    es.indices.refresh(index=index)
    hits = es.search(index=index, size=1000, query={"match_all": {}})["hits"]["hits"]
    return {(h["_source"]["user_id"], h["_source"]["session_id"]): h for h in hits}


def test_the_pass_keeps_one_document_per_session_of_each_user(es: Elasticsearch, alias: str):
    # Two users with a session of the same id: two documents, each of its own user.
    _store(es, alias, [
        ("ana", "s1", "a1", "We are planning the trip to Lisbon"),
        ("ana", "s1", "a2", "Book the hotels near the river"),
        ("ana", "s2", "a3", "The dentist moved my appointment"),
        ("bob", "s1", "b1", "My garden needs watering"),
    ])  # fmt: skip
    enrich(es, alias, StaticEmbedder())

    found = _documents(es, alias)
    assert sorted(found) == [("ana", "s1"), ("ana", "s2"), ("bob", "s1")]
    trip = found[("ana", "s1")]
    assert trip["_routing"] == "ana" and trip["_id"] == document_id("ana", "s1")
    assert trip["_source"]["text"] == [
        "We are planning the trip to Lisbon",
        "Book the hotels near the river",
    ]
    assert "hotel" in trip["_source"]["stems"][1].split()  # stemmed, as the events' stems are
    assert trip["_source"]["turns"] == 2 and len(trip["_source"]["event_ids"]) == 2
    assert "garden" not in str(trip["_source"])
    assert found[("bob", "s1")]["_source"]["text"] == ["My garden needs watering"]

    # A later turn of the session: its document is rebuilt with it, the others kept.
    _store(es, alias, [("ana", "s1", "a4", "and a table at the fado house")], first=10)
    enrich(es, alias, StaticEmbedder())
    again = _documents(es, alias)
    assert again[("ana", "s1")]["_source"]["turns"] == 3
    assert again[("ana", "s1")]["_source"]["text"][-1] == "and a table at the fado house"
    assert again[("bob", "s1")]["_source"] == found[("bob", "s1")]["_source"]


def test_erasures_rebuild_or_remove_the_documents_they_reach_and_no_other(
    es: Elasticsearch, alias: str
):
    _store(es, alias, [
        ("ana", "s1", "a1", "The alarm code is 4471"),
        ("ana", "s1", "a2", "Thanks, noted"),
        ("ana", "s2", "a3", "Lunch on Friday"),
        ("bob", "s1", "b1", "The alarm code is 9902"),
    ])  # fmt: skip
    enrich(es, alias, StaticEmbedder())

    erase(es, alias, Scope.event("ana", "a1"))
    found = _documents(es, alias)
    assert "4471" not in str(found[("ana", "s1")]["_source"])
    assert found[("ana", "s1")]["_source"]["text"] == ["Thanks, noted"]
    assert "9902" in str(found[("bob", "s1")]["_source"])  # another user's: untouched

    erase(es, alias, Scope.session("ana", "s2"))
    assert sorted(_documents(es, alias)) == [("ana", "s1"), ("bob", "s1")]

    erase(es, alias, Scope.user("ana"))
    assert sorted(_documents(es, alias)) == [("bob", "s1")]


def test_an_alias_set_up_before_session_documents_is_searched_without_them_until_setup(
    es: Elasticsearch, es_url: str, alias: str
):
    es.indices.delete(index=session_index(alias))
    _store(es, alias, [("ana", "s1", "a1", "We are planning the trip to Lisbon")])
    enrich(es, alias, StaticEmbedder())
    assert not es.indices.exists(index=session_index(alias))  # the pass made none

    searcher = Searchers(es, alias, KEY, embedder=StaticEmbedder()).memory(user_id="ana")
    hits = searcher.search("trip to Lisbon", mode="hybrid", limit=5, context=0).hits
    assert [hit.event.event_id for hit in hits] == ["a1"]

    # `setup` adds their index and writes the document of each session stored before.
    done = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, "setup"],
                              env={"SESSION_RECALL_EMBEDDER": "none"})  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "Session documents: 1 written." in done.output
    assert sorted(_documents(es, alias)) == [("ana", "s1")]
    again = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, "setup"],
                               env={"SESSION_RECALL_EMBEDDER": "none"})  # fmt: skip
    assert again.exit_code == 0 and "Session documents" not in again.output  # once
