"""memory_search while some or all of a user's events lack the model's vectors (stored
before the model, or not enriched yet): the hits stay those keywords find, and the
notice gives the share the vector list could not see."""

import json

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.embeddings import StaticEmbedder
from session_recall.indexer import Event, Submission, Writer, enrich
from session_recall.recall import Searchers

pytestmark = pytest.mark.integration

KEY = b"memory-coverage-cursor-key-32b!!"
TURNS = [
    "We booked the Lisbon venue for the offsite.",
    "The caterer wants the headcount by Friday.",
    "Flights from Berlin land at noon.",
    "The hotel has a room block until May.",
]


def _events(user: str, first: int = 0) -> list[Event]:
    return [
        Event.model_validate(
            {"user_id": user, "session_id": f"{user}-s", "event_id": f"{user}-{first + i}",
             "timestamp": f"2026-05-0{1 + first + i}T10:00:00Z", "type": "user_message",
             "text": text}
        )
        for i, text in enumerate(TURNS)
    ]  # fmt: skip


def _write(es: Elasticsearch, alias: str, events: list[Event], *, vectors: bool) -> None:
    writer = Writer(es, alias, embedder=StaticEmbedder() if vectors else None)
    assert all(w.result.stored for w in writer.write(Submission(e) for e in events))
    es.indices.refresh(index=alias)


def test_before_any_vector_hybrid_answers_on_keywords_and_says_none_has_vectors(
    es: Elasticsearch, alias: str
):
    _write(es, alias, _events("ann"), vectors=False)
    searcher = Searchers(es, alias, KEY, embedder=StaticEmbedder()).memory(user_id="ann")
    result = searcher.search("Lisbon venue")
    assert result.mode == "hybrid"
    assert result.notice is not None and "No event searched has" in result.notice
    assert StaticEmbedder().model_id in result.notice and "session-recall embed" in result.notice
    keyword = searcher.search("Lisbon venue", mode="keyword")
    assert [h.event.event_id for h in result.hits] == [h.event.event_id for h in keyword.hits]
    assert keyword.notice is None  # keywords alone never needed the vectors

    enrich(es, alias, StaticEmbedder())
    es.indices.refresh(index=alias)
    assert searcher.search("Lisbon venue").notice is None


def test_the_notice_gives_the_share_of_the_users_events_without_vectors(
    es: Elasticsearch, alias: str
):
    _write(es, alias, _events("ben"), vectors=True)
    _write(es, alias, _events("ben", first=4), vectors=False)
    _write(es, alias, _events("cat"), vectors=False)  # another user's never count
    searcher = Searchers(es, alias, KEY, embedder=StaticEmbedder()).memory(user_id="ben")
    result = searcher.search("headcount for the caterer")
    assert result.notice is not None and "50% of the events searched (4 of 8)" in result.notice
    # The turns without vectors are found all the same, by their words.
    assert {"ben-1", "ben-5"} <= {h.event.event_id for h in result.hits}
    # The share is of the events searched: since/until narrow it.
    later = searcher.search("headcount", since="2026-05-05T00:00:00Z")
    assert later.notice is not None and "No event searched has" in later.notice
    earlier = searcher.search("headcount", until="2026-05-04T23:00:00Z")
    assert earlier.notice is None


def test_the_cli_says_no_event_has_the_models_vectors_before_embed_has_run(
    es: Elasticsearch, es_url: str, alias: str
):
    _write(es, alias, _events("dan"), vectors=False)
    command = ["memory-search", "--user", "dan", "--format", "json", "Lisbon venue"]
    result = CliRunner().invoke(
        main, ["--es-url", es_url, "--index", alias, *command],
        env={"SESSION_RECALL_EMBEDDER": "static"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["mode"] == "hybrid" and "No event searched has" in document["notice"]
    assert document["hits"][0]["text"] == TURNS[0]


def test_in_semantic_mode_the_notice_says_the_events_without_vectors_are_not_found(
    es: Elasticsearch, alias: str
):
    _write(es, alias, _events("eve"), vectors=True)
    _write(es, alias, _events("eve", first=4), vectors=False)
    searcher = Searchers(es, alias, KEY, embedder=StaticEmbedder()).memory(user_id="eve")
    result = searcher.search("headcount for the caterer", mode="semantic")
    assert result.notice is not None and "semantic mode cannot find them" in result.notice
    assert {h.event.event_id for h in result.hits} <= {f"eve-{i}" for i in range(4)}
