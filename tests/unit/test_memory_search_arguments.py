"""memory_search's arguments are checked before any request, and its requests are
pinned to the user: the `knn` pre-filter and every neighbour query carry it."""

import pytest
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.recall import (
    EmptyQuery,
    InvalidLimit,
    InvalidScope,
    InvalidSearchMode,
    InvalidSince,
    InvalidTypes,
    InvalidUntil,
    MemorySearcher,
    QueryTooLong,
    RecallError,
)
from session_recall.recall.memory_query import event_filters, knn_body, neighbour_bodies

# Never asked anything: every case below fails before a request.
CLIENT = Elasticsearch("http://127.0.0.1:9")
SEARCHER = MemorySearcher(CLIENT, user_id="alice", alias="a")


@pytest.mark.parametrize(
    ("arguments", "error", "says"),
    [
        ({"query": ""}, EmptyQuery, "empty"),
        ({"query": "  \n "}, EmptyQuery, "empty"),
        ({"query": "x" * 1001}, QueryTooLong, "1001 characters"),
        ({"limit": 0}, InvalidLimit, "from 1 to 50"),
        ({"limit": 51}, InvalidLimit, "from 1 to 50"),
        ({"limit": True}, InvalidLimit, "out of range"),
        ({"context": -1}, InvalidLimit, "from 0 to 10"),
        ({"context": 11}, InvalidLimit, "from 0 to 10"),
        ({"since": "yesterday"}, InvalidSince, "2026-07-01T00:00:00Z"),
        ({"until": "2026-07-01"}, InvalidUntil, "ISO-8601"),
        (
            {"since": "2026-07-02T00:00:00Z", "until": "2026-07-01T00:00:00Z"},
            InvalidUntil,
            "before",
        ),
        ({"types": "user_message"}, InvalidTypes, "list"),
        ({"types": [""]}, InvalidTypes, "not an event type"),
        ({"types": ["t"] * 21}, InvalidTypes, "at most 20"),
        ({"mode": "fuzzy"}, InvalidSearchMode, "'keyword', 'semantic' or 'hybrid'"),
    ],
)
def test_bad_arguments_are_refused_with_the_next_step(arguments, error, says):
    arguments = {"query": "what did we decide?", **arguments}
    with pytest.raises(error, match=says) as refused:
        SEARCHER.search(**arguments)
    assert isinstance(refused.value, RecallError) and refused.value.hint


def test_a_searcher_needs_a_user():
    with pytest.raises(InvalidScope):
        MemorySearcher(CLIENT, user_id=" ", alias="a")


def test_without_an_embedder_the_default_mode_is_keyword():
    assert SEARCHER.default_mode == "keyword"


def test_the_user_filter_is_inside_the_knn_option_as_a_pre_filter():
    filters = event_filters(
        "alice",
        since=Instant.parse("2026-07-01T00:00:00Z"),
        until=None,
        types=("user_message",),
    )
    body = knn_body(filters, [0.1, 0.2], field="embeddings.m", size=10)
    assert "query" not in body  # nothing outside the pre-filter to widen or narrow it
    assert {"term": {"user_id": "alice"}} in body["knn"]["filter"]["bool"]["filter"]
    assert body["knn"]["k"] == 10 and body["knn"]["num_candidates"] >= 10


def test_neighbour_queries_are_pinned_to_the_user_and_the_session():
    before, after = neighbour_bodies("alice", "s1", [5, "e5", "alice"], context=2)
    for body in (before, after):
        assert body["query"]["bool"]["filter"] == [
            {"term": {"user_id": "alice"}},
            {"term": {"session_id": "s1"}},
        ]
        assert body["size"] == 2 and body["search_after"] == [5, "e5", "alice"]
    assert before["sort"][0] == {"timestamp": "desc"}
    assert after["sort"][0] == {"timestamp": "asc"}
