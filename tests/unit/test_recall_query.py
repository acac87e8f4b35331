"""The pure query builders: shape of the bodies, and what never reaches the engine."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.instant import Instant
from session_recall.core.user_filter import user_filter
from session_recall.recall.query import (
    SORT,
    Criteria,
    SortPosition,
    after_clause,
    latest_body,
    latest_instant,
    page_body,
    search_query,
    skip_body,
)
from session_recall.recall.recent_conversations import (
    conversations_clause,
    recent_conversations_body,
    window_start,
)
from session_recall.recall.scope import SearchScope, binding
from session_recall.recall.text_match import phrase_clause

ALICE = SearchScope(
    key=("cross_session", "a", "alice"), pinned=tuple(user_filter("alice")), routing="alice"
)
FORBIDDEN = {"query_string", "simple_query_string", "regexp", "wildcard", "script", "fuzzy"}


def keys(value: Any) -> set[str]:
    """Every key of every object in a JSON-like value."""
    if isinstance(value, dict):
        return set(value).union(*(keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys(v) for v in value))
    return set()


def test_any_puts_one_phrase_per_term_in_should_with_minimum_one():
    query = search_query(ALICE.filters(), Criteria(("we decided", "let's go with"), "any"))
    assert query == {
        "bool": {
            "filter": [{"term": {"user_id": "alice"}}],
            "should": [phrase_clause("we decided"), phrase_clause("let's go with")],
            "minimum_should_match": 1,
        }
    }


def test_all_puts_the_phrases_in_must():
    query = search_query(ALICE.filters(), Criteria(("a", "b"), "all"))
    assert query["bool"]["must"] == [phrase_clause("a"), phrase_clause("b")]
    assert "should" not in query["bool"]


def test_a_phrase_is_on_text_for_events_without_words_and_on_words_normalised():
    clause = phrase_clause("Café 太郎")
    on_text, on_words = clause["bool"]["should"]
    assert on_text == {
        "bool": {
            "must": [{"match_phrase": {"text": {"query": "Café 太郎"}}}],
            "must_not": [{"exists": {"field": "words"}}],
        }
    }
    assert on_words == {"match_phrase": {"words": {"query": "café 太 郎"}}}
    assert clause["bool"]["minimum_should_match"] == 1
    # Nothing to find in the words of punctuation: the text clause alone, as before.
    assert len(phrase_clause("...")["bool"]["should"]) == 1


def test_since_and_as_of_bound_the_timestamp_in_filter_context():
    since, as_of = Instant.parse("2026-07-01T00:00:00Z"), Instant.parse("2026-07-02T00:00:00.5Z")
    query = search_query(ALICE.filters(), Criteria(("a",), since=since), as_of=as_of)
    assert {
        "range": {
            "timestamp": {
                "gte": "2026-07-01T00:00:00.000000000Z",
                "lte": "2026-07-02T00:00:00.500000000Z",
            }
        }
    } in query["bool"]["filter"]


@pytest.mark.parametrize(
    ("since", "position", "lower"),
    [
        (None, "2026-07-05T00:00:00Z", "2026-07-05T00:00:00.000000000Z"),
        ("2026-07-01T00:00:00Z", "2026-07-05T00:00:00Z", "2026-07-05T00:00:00.000000000Z"),
        ("2026-08-01T00:00:00Z", "2026-07-05T00:00:00Z", "2026-08-01T00:00:00.000000000Z"),
    ],
)
@pytest.mark.parametrize("how", ["after", "resume_at"])
def test_a_cursor_position_bounds_the_timestamp_so_older_partitions_are_skipped(
    since: str | None, position: str, lower: str, how: str
):
    at = SortPosition(Instant.parse(position).nanos, "e9", "alice")
    criteria = Criteria(("a",), since=None if since is None else Instant.parse(since))
    query = search_query(ALICE.filters(), criteria, **{how: at})
    ranges = [c["range"]["timestamp"] for c in query["bool"]["filter"] if "range" in c]
    assert ranges == [{"gte": lower}]  # one plain range, which the pre-filter reads


def test_pages_sort_on_timestamp_then_event_id_then_user_and_never_count():
    body = page_body({"match_all": {}}, size=11, search_after=SortPosition(5, "e1", "u"))
    assert body["sort"] == SORT == [{"timestamp": "asc"}, {"event_id": "asc"}, {"user_id": "asc"}]
    assert body["track_total_hits"] is False
    assert body["_source"] == ["session_id", "type", "text"]  # no payload: a search's
    assert body["search_after"] == [5, "e1", "u"]
    assert "from" not in body
    assert page_body({"match_all": {}}, size=11, offset=30)["from"] == 30


def test_skip_and_latest_bodies_carry_no_source():
    skip = skip_body({"match_all": {}}, skip=10_000)
    assert (skip["from"], skip["size"], skip["_source"]) == (9_999, 1, False)
    latest = latest_body({"match_all": {}})
    assert latest["size"] == 0
    assert latest["aggs"] == {"latest": {"max": {"field": "timestamp"}}}


def test_the_latest_instant_covers_its_whole_millisecond():
    response = {"aggregations": {"latest": {"value": 1_782_907_200_123.0}}}
    assert latest_instant(response) == Instant.parse("2026-07-01T12:00:00.123999999Z")
    assert latest_instant({"aggregations": {"latest": {"value": None}}}) is None


def test_after_clause_is_strictly_after_the_position():
    at = "1970-01-01T00:00:00.000000007Z"
    same_instant = {"range": {"timestamp": {"gte": at, "lte": at}}}
    assert after_clause(SortPosition(7, "e9", "u1")) == {
        "bool": {
            "should": [
                {"range": {"timestamp": {"gt": at}}},
                {"bool": {"filter": [same_instant, {"range": {"event_id": {"gt": "e9"}}}]}},
                {
                    "bool": {
                        "filter": [
                            same_instant,
                            {"term": {"event_id": "e9"}},
                            {"range": {"user_id": {"gt": "u1"}}},
                        ]
                    }
                },
            ],
            "minimum_should_match": 1,
        }
    }


def test_recent_conversations_keep_chat_of_the_users_contact_and_inbox_in_the_window():
    end = Instant.parse("2026-07-01T00:00:00Z")
    body = recent_conversations_body(
        user_id="u", contact_id="c", inbox_id="i", start=window_start(end, 90), end=end, limit=200
    )
    assert body["query"]["bool"]["filter"] == [
        {"term": {"user_id": "u"}},
        {"term": {"contact_id": "c"}},
        {"term": {"inbox_id": "i"}},
        {"term": {"conversation_type": "chat"}},
        {
            "range": {
                "timestamp": {
                    "gte": "2026-04-02T00:00:00.000000000Z",
                    "lte": "2026-07-01T00:00:00.000000000Z",
                }
            }
        },
    ]
    terms = body["aggs"]["conversations"]["terms"]
    assert terms["size"] == 200
    assert terms["order"][0] == {"last_message": "desc"}


def test_scope_keys_are_tuples_so_separators_cannot_collide():
    assert binding(["x", "a/b", "c"]) != binding(["x", "a", "b/c"])
    assert binding(["x", 1]) == binding(["x", 1])


TRICKY = st.sampled_from(
    ["user_id:bob", "*", '"', "\\", "OR", "AND NOT", '{"term": {"user_id": "bob"}}', "中文", "]}"]
)


@given(
    terms=st.lists(st.one_of(TRICKY, st.text(max_size=30)), min_size=1, max_size=20),
    match=st.sampled_from(["any", "all"]),
)
def test_user_text_only_ever_lands_in_match_phrase_values(terms, match):
    criteria = Criteria(tuple(terms), match)
    query = search_query(ALICE.filters(), criteria, after=SortPosition(1, "e", "alice"))
    body = page_body(query, size=10)
    assert not keys(body) & FORBIDDEN
    # The scope filter is exactly the bound one, whatever the terms say.
    assert query["bool"]["filter"][0] == {"term": {"user_id": "alice"}}
    clauses = query["bool"]["should" if match == "any" else "must"]
    assert clauses == [phrase_clause(term) for term in terms]
    for term, clause in zip(terms, clauses, strict=True):
        on_text, *on_words = clause["bool"]["should"]
        assert on_text["bool"]["must"] == [{"match_phrase": {"text": {"query": term}}}]
        # The only other place user text lands: a value of match_phrase on words.
        for phrase in on_words:
            assert set(phrase) == {"match_phrase"} and set(phrase["match_phrase"]) == {"words"}
    assert keys(clauses) <= {
        "bool", "should", "must", "must_not", "exists", "field", "minimum_should_match",
        "match_phrase", "text", "words", "query",
    }  # fmt: skip


def test_scope_filters_pin_every_field_then_add_its_clauses():
    clause = conversations_clause("now", ["old-2", "old-1"])
    scope = SearchScope(
        key=("k",), pinned=tuple(user_filter("u", contact_id="c", inbox_id="i")), clauses=(clause,)
    )
    assert scope.filters() == [
        {"term": {"user_id": "u"}},
        {"term": {"contact_id": "c"}},
        {"term": {"inbox_id": "i"}},
        clause,
    ]


def test_the_current_conversation_is_in_whatever_its_type_the_others_only_as_chat():
    assert conversations_clause("now", []) == {"term": {"session_id": "now"}}
    assert conversations_clause("now", ["b", "a"]) == {
        "bool": {
            "should": [
                {"term": {"session_id": "now"}},
                {
                    "bool": {
                        "filter": [
                            {"terms": {"session_id": ["a", "b"]}},
                            {"term": {"conversation_type": "chat"}},
                        ]
                    }
                },
            ],
            "minimum_should_match": 1,
        }
    }
