"""The alias spans many partitions: order, pages and scope C still hold across them."""

import pytest
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.recall import (
    CrossConversationSearcher,
    CrossConversationSettings,
    CrossSessionSearcher,
)
from tests.support.events import event, write_events
from tests.support.pages import served

pytestmark = pytest.mark.integration

KEY = b"partition-test-cursor-key-32byte"
NOW = Instant.parse("2026-07-01T00:00:00Z")


def batch(first: int, count: int) -> list[dict]:
    # Interleaved in time across partitions: even days first, odd days later; 60 days
    # span two months.
    return [
        event(
            f"e{n:03d}",
            user_id="u",
            session_id=f"s{n % 5}",
            timestamp=Instant(NOW.nanos - (n + 1) * 86_400 * 10**9),
            text="we decided",
            contact_id="c",
            inbox_id="i",
            conversation_type="chat",
        )
        for n in range(first, first + 2 * count, 2)
    ]


def test_search_spans_the_partitions_behind_the_alias(es: Elasticsearch, alias: str):
    write_events(es, alias, batch(0, 30))
    write_events(es, alias, batch(1, 30))
    months = {f"{alias}-2026.05", f"{alias}-2026.06"}
    assert months <= set(es.indices.get_alias(name=alias).body)
    expected = sorted((f"e{n:03d}" for n in range(60)), reverse=True)  # oldest = highest n

    searcher = CrossSessionSearcher(
        es, alias=alias, user_id="u", cursor_key=KEY, page_size=7, max_result_window=20
    )
    assert served(searcher, "we decided") == expected
    for number in (0, 2, 5, 8):  # pages 3 and beyond hop past the tiny window
        items = searcher.search("we decided", page=number).items
        assert [item.event_id for item in items] == expected[number * 7 : number * 7 + 7]

    c = CrossConversationSearcher(
        es,
        alias=alias,
        user_id="u",
        contact_id="c",
        inbox_id="i",
        settings=CrossConversationSettings(enabled=True, max_conversations=2),
        cursor_key=KEY,
        page_size=100,
        now=lambda: NOW,
    )
    # The two most recently active conversations: s0 (e000) and s1 (e001).
    found = c.search("we decided", current_session_id="none").items
    assert {item.session_id for item in found} == {"s0", "s1"}


SPARSE_MONTHS = ["2024-01", "2024-02", "2024-05", "2024-06", "2024-07", "2025-01", "2025-11"]


def test_a_first_page_over_sparse_partitions_is_the_oldest_matches_in_order(
    es: Elasticsearch, alias: str
):
    # The first page is searched window by window; with months missing, months with
    # one match and matches on a window's edge, it is still exactly the oldest matches.
    history = []
    for m, month in enumerate(SPARSE_MONTHS):
        for n in range(1 + m % 3):
            stamp = f"{month}-01T00:00:00Z" if n == 0 else f"{month}-{3 + n:02d}T08:00:00Z"
            history.append(event(f"{month}-{n}", user_id="sparse", session_id="s",
                                 text="we decided", timestamp=Instant.parse(stamp)))  # fmt: skip
    history.append(event("other", user_id="sparse", session_id="s", text="unrelated",
                         timestamp=Instant.parse("2023-12-31T23:59:59Z")))  # fmt: skip
    write_events(es, alias, history)
    matches = [e for e in history if e["text"] == "we decided"]
    for since in (None, "2024-02-10T00:00:00Z", "2024-06-01T00:00:00Z", "2025-11-01T00:00:00Z"):
        start = None if since is None else Instant.parse(since)
        expected = [
            e["event_id"]
            for e in matches
            if start is None or Instant.parse(e["timestamp"]) >= start
        ]
        for page_size in (1, 2, 3, 7, 12, 40):
            searcher = CrossSessionSearcher(
                es, alias=alias, user_id="sparse", cursor_key=KEY, page_size=page_size
            )
            page = searcher.search("we decided", since=since)
            got = [item.event_id for item in page.items]
            assert got == expected[:page_size], (since, page_size)
            while page.next_cursor is not None:
                page = searcher.search("we decided", since=since, cursor=page.next_cursor)
                got += [item.event_id for item in page.items]
            assert got == expected, (since, page_size)
