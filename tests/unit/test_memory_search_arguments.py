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


def test_a_bounded_neighbour_query_keeps_the_user_and_session_and_adds_its_side_of_the_span():
    stamp = Instant.parse("2026-01-02T00:00:00Z")
    position = [stamp.nanos, "e5", "alice"]
    day = 24 * 3600 * 10**9
    before, after = neighbour_bodies("alice", "s1", position, context=2, reach_ns=day)
    pinned = [{"term": {"user_id": "alice"}}, {"term": {"session_id": "s1"}}]
    at = stamp.to_elasticsearch()
    assert before["query"]["bool"]["filter"] == [
        *pinned,
        {"range": {"timestamp": {"gte": "2026-01-01T00:00:00.000000000Z", "lte": at}}},
    ]
    assert after["query"]["bool"]["filter"] == [
        *pinned,
        {"range": {"timestamp": {"gte": at, "lte": "2026-01-03T00:00:00.000000000Z"}}},
    ]


def test_a_span_past_the_first_or_the_last_instant_stops_there():
    first, last = [0, "e0", "alice"], [2**63 - 1, "e9", "alice"]
    before, _ = neighbour_bodies("alice", "s1", first, context=1, reach_ns=10**9)
    _, after = neighbour_bodies("alice", "s1", last, context=1, reach_ns=10**9)
    assert before["query"]["bool"]["filter"][-1]["range"]["timestamp"]["gte"] == (
        "1970-01-01T00:00:00.000000000Z"
    )
    assert after["query"]["bool"]["filter"][-1]["range"]["timestamp"]["lte"] == (
        Instant(2**63 - 1).to_elasticsearch()
    )
