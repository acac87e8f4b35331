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
