"""The reference tools' own examples, order, CJK phrases and errors, on a real node."""

import pytest
from elasticsearch import Elasticsearch

from session_recall.recall import (
    ConflictingPagination,
    ConversationSearcher,
    CrossSessionSearcher,
    CursorMismatch,
    IndexNotFound,
    InvalidPage,
    RecallPage,
)
from tests.support.events import event, write_events

pytestmark = pytest.mark.integration

KEY = b"reference-test-cursor-key-32byte"
DATASET = [
    # alice: three sessions
    ("a1", "alice", "s-1", "2026-06-20T09:00:00Z", "We decided to use Postgres for the ledger."),
    ("a2", "alice", "s-1", "2026-06-20T09:00:05Z", "Noted: Postgres it is."),
    ("a3", "alice", "s-2", "2026-07-01T10:00:00Z", "Let's go with the blue theme."),
    ("a4", "alice", "s-2", "2026-07-01T10:00:30Z", "WE DECIDED yesterday, so let's go with it."),
    ("a5", "alice", "s-3", "2026-07-02T08:00:00Z", "Remember this: I prefer tea."),
    ("a6", "alice", "s-3", "2026-07-03T08:00:00Z", "we decide later; let us go, with care"),
    # bob says the same things, and must never show up for alice
    ("b1", "bob", "s-1", "2026-07-01T10:00:00Z", "We decided: let's go with bob's plan."),
    # adjacent and separated Chinese characters
    ("z1", "zh", "z-1", "2026-07-01T00:00:01Z", "我们决定了明天出发"),
    ("z2", "zh", "z-1", "2026-07-01T00:00:02Z", "决心已定"),
    ("z3", "zh", "z-1", "2026-07-01T00:00:03Z", "定下来再决"),
]
# Timestamps as an agent might send them: text order differs from time order.
CLOCK = [
    ("t-late", "2026-07-01T12:00:01Z"),
    ("t-half", "2026-07-01T12:00:00.5Z"),
    ("t-first", "2026-07-01T12:00:00Z"),
    ("t-tie-2", "2026-07-01T12:00:02Z"),
    ("t-tie-0", "2026-07-01T12:00:02Z"),
    ("t-tie-1", "2026-07-01T12:00:02Z"),
    ("t-nanos", "2026-07-01T12:00:02.123456789Z"),
]


@pytest.fixture(scope="module")
def dataset(es: Elasticsearch, module_alias: str) -> str:
    events = [
        event(eid, user_id=user, session_id=session, timestamp=at, text=text)
        for eid, user, session, at, text in DATASET
    ]
    for eid, at in CLOCK:
        doc = event(eid, user_id="clock", session_id="c-1", timestamp=at, text="tick")
        doc["timestamp"] = at  # stored as sent, fraction length and all
        events.append(doc)
    write_events(es, module_alias, events)
    return module_alias


def alice(es: Elasticsearch, alias: str, **options: object) -> CrossSessionSearcher:
    return CrossSessionSearcher(es, alias=alias, user_id="alice", cursor_key=KEY, **options)


def ids(page: RecallPage) -> list[str]:
    return [item.event_id for item in page.items]


def test_any_finds_events_with_either_phrase_in_time_order(es, dataset):
    page = alice(es, dataset).search("we decided, let's go with")
    assert ids(page) == ["a1", "a3", "a4"]
    assert [item.session_id for item in page.items] == ["s-1", "s-2", "s-2"]
    assert page.items[0].text == "We decided to use Postgres for the ledger."
    assert page.items[0].type == "user_message"
    assert page.items[0].timestamp.isoformat() == "2026-06-20T09:00:00Z"
    assert page.next_cursor is None


def test_all_needs_every_phrase_in_the_same_event(es, dataset):
    assert ids(alice(es, dataset).search("we decided, let's go with", match="all")) == ["a4"]


def test_matching_ignores_case(es, dataset):
    searcher = alice(es, dataset)
    assert ids(searcher.search("WE Decided")) == ids(searcher.search("we decided")) == ["a1", "a4"]


def test_since_keeps_events_at_or_after_the_instant(es, dataset):
    searcher = alice(es, dataset)
    assert ids(searcher.search("we decided, let's go with", since="2026-07-01T00:00:00Z")) == [
        "a3",
        "a4",
    ]
    assert ids(searcher.search("let's go with", since="2026-07-01T10:00:00Z")) == ["a3", "a4"]
    assert ids(searcher.search("let's go with", since="2026-07-01T10:00:00.000000001Z")) == ["a4"]


def test_a_negative_page_is_refused_where_the_reference_read_page_zero(es, dataset):
    """The reference tools take page -3 as page 0; a caller counting backwards would
    then be shown the first page as if it were the one asked for, so it is refused."""
    searcher = alice(es, dataset, page_size=2)
    with pytest.raises(InvalidPage, match="Pages count from 0"):
        searcher.search("we decided, let's go with", page=-3)
    assert ids(searcher.search("we decided, let's go with")) == ["a1", "a3"]
    assert ids(searcher.search("we decided, let's go with", page=1)) == ["a4"]


def test_nothing_found_is_an_empty_page(es, dataset):
    page = alice(es, dataset).search("we decide later, remember this", match="all")
    assert page == RecallPage(items=[], next_cursor=None)


def test_results_follow_real_instants_and_ties_follow_event_id(es, dataset):
    searcher = CrossSessionSearcher(es, alias=dataset, user_id="clock", cursor_key=KEY)
    page = searcher.search("tick")
    expected = ["t-first", "t-half", "t-late", "t-tie-0", "t-tie-1", "t-tie-2", "t-nanos"]
    assert ids(page) == expected
    assert [item.timestamp.isoformat() for item in page.items[:3]] == [
        "2026-07-01T12:00:00Z",
        "2026-07-01T12:00:00.500Z",
        "2026-07-01T12:00:01Z",
    ]
    assert page.items[-1].timestamp.isoformat() == "2026-07-01T12:00:02.123456789Z"
    # The same order a page at a time, a page boundary falling between equal instants,
    # and the chain's frozen bound keeping the last, sub-millisecond event.
    small = CrossSessionSearcher(es, alias=dataset, user_id="clock", cursor_key=KEY, page_size=4)
    head = small.search("tick")
    tail = small.search("tick", cursor=head.next_cursor)
    assert ids(head) + ids(tail) == expected
    assert tail.next_cursor is None


def test_two_chinese_characters_match_only_side_by_side(es, dataset):
    searcher = CrossSessionSearcher(es, alias=dataset, user_id="zh", cursor_key=KEY)
    assert ids(searcher.search("决定")) == ["z1"]
    assert ids(searcher.search("定决")) == []
    assert ids(searcher.search("决, 定", match="all")) == ["z1", "z2", "z3"]


def test_conversation_search_stays_in_its_session(es, dataset):
    def search(session_id: str, query: str) -> list[str]:
        searcher = ConversationSearcher(
            es, alias=dataset, user_id="alice", session_id=session_id, cursor_key=KEY
        )
        return ids(searcher.search(query))

    assert search("s-2", "let's go with") == ["a3", "a4"]
    assert search("s-1", "let's go with") == []
    assert search("s-1", "postgres") == ["a1", "a2"]
    # One phrase, taken whole: the comma is not a separator here.
    assert search("s-2", "yesterday, so") == ["a4"]


def test_a_cursor_only_works_for_its_own_user_and_query(es, dataset):
    first = alice(es, dataset, page_size=1).search("we decided")
    assert first.next_cursor is not None
    bob = CrossSessionSearcher(es, alias=dataset, user_id="bob", cursor_key=KEY, page_size=1)
    with pytest.raises(CursorMismatch, match="another scope"):
        bob.search("we decided", cursor=first.next_cursor)
    with pytest.raises(CursorMismatch, match="another query"):
        alice(es, dataset, page_size=1).search("we decided", match="all", cursor=first.next_cursor)
    with pytest.raises(ConflictingPagination):
        alice(es, dataset, page_size=1).search("we decided", page=2, cursor=first.next_cursor)
    following = alice(es, dataset, page_size=1).search("we decided", cursor=first.next_cursor)
    assert ids(following) == ["a4"]
    # An empty cursor, as tool callers send for an unset argument, is the first page.
    assert ids(alice(es, dataset, page_size=1).search("we decided", cursor="")) == ["a1"]


def test_a_missing_alias_is_a_clear_error(es):
    searcher = CrossSessionSearcher(es, alias="t-recall-no-such-alias", user_id="u", cursor_key=KEY)
    with pytest.raises(IndexNotFound, match="session-recall --index t-recall-no-such-alias setup"):
        searcher.search("anything")
