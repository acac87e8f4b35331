"""The basic reads' pure parts: the session list's request and page, and a read's query."""

import pytest
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.recall import (
    InvalidScope,
    RecallPage,
    SessionLister,
    SessionsPage,
    SessionSummary,
)
from session_recall.recall.query import Criteria, search_query
from session_recall.recall.session_list import sessions_body, sessions_page

# A client that is never asked anything: building a lister makes no request.
CLIENT = Elasticsearch("http://127.0.0.1:9")


def test_the_session_list_is_pinned_to_the_user_and_aggregated_in_the_engine():
    body = sessions_body(user_id="alice", size=11)
    assert body["size"] == 0, "no event leaves the engine, only the buckets"
    assert body["query"] == {"bool": {"filter": [{"term": {"user_id": "alice"}}]}}
    composite = body["aggs"]["sessions"]["composite"]
    assert composite == {
        "size": 11,
        "sources": [{"session_id": {"terms": {"field": "session_id"}}}],
    }
    edges = body["aggs"]["sessions"]["aggs"]
    assert edges["first"]["top_hits"]["sort"] == [{"timestamp": "asc"}]
    assert edges["last"]["top_hits"]["sort"] == [{"timestamp": "desc"}]


def test_the_next_page_of_sessions_resumes_after_a_session_id():
    body = sessions_body(user_id="alice", size=3, after="s-2")
    assert body["aggs"]["sessions"]["composite"]["after"] == {"session_id": "s-2"}


def _bucket(session: str, first: int, last: int, count: int) -> dict:
    def edge(nanos: int) -> dict:
        return {"hits": {"hits": [{"sort": [nanos]}]}}

    return {
        "key": {"session_id": session},
        "doc_count": count,
        "first": edge(first),
        "last": edge(last),
    }


@pytest.mark.parametrize(
    ("buckets", "next_cursor"),
    [(2, None), (3, "s1"), (0, None)],  # asked for 2 + 1: a third bucket means more
)
def test_a_session_page_hands_out_next_cursor_only_when_there_is_more(buckets, next_cursor):
    response = {
        "aggregations": {
            "sessions": {"buckets": [_bucket(f"s{n}", n, n + 1, n + 2) for n in range(buckets)]}
        }
    }
    page = sessions_page(response, 2)
    assert page.next_cursor == next_cursor
    assert page.items == [
        SessionSummary(session_id=f"s{n}", first=Instant(n), last=Instant(n + 1), events=n + 2)
        for n in range(min(buckets, 2))
    ]


def test_a_page_without_aggregations_is_empty():
    assert sessions_page({}, 5) == SessionsPage(items=[])


@pytest.mark.parametrize("user_id", ["", " "])
def test_a_session_lister_needs_a_user(user_id):
    with pytest.raises(InvalidScope, match="user_id"):
        SessionLister(CLIENT, alias="a", user_id=user_id)


def test_reading_a_session_is_its_filters_alone():
    filters = [{"term": {"user_id": "u"}}, {"term": {"session_id": "s"}}]
    assert search_query(filters, Criteria(())) == {"bool": {"filter": filters}}


def test_every_page_names_its_next_page_next_cursor():
    """Session lists and event pages alike: one name to pass back as `cursor`."""
    for page in (SessionsPage, RecallPage):
        assert [name for name in page.model_fields if name.startswith("next")] == ["next_cursor"]
