"""Recall only ever reads: every client call of every searcher is recorded at a seam.

It searches, and lists the alias's partitions with `_field_caps` (a read action too)."""

import pytest
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.recall import (
    ConversationSearcher,
    CrossConversationSearcher,
    CrossConversationSettings,
    CrossSessionSearcher,
)
from tests.support.events import event, write_events
from tests.support.recording import RecordingClient

pytestmark = pytest.mark.integration

KEY = b"read-only-test-cursor-key-32byte"


def test_every_searcher_and_pagination_path_only_searches_and_reads_field_caps(
    es: Elasticsearch, alias: str
):
    events = [
        event(
            f"e{i:03d}",
            user_id="u",
            session_id=f"s{i % 4}",
            timestamp=f"2026-07-01T00:00:{i:02d}Z",
            text="we decided",
            contact_id="c",
            inbox_id="i",
            conversation_type="chat",
        )
        for i in range(60)
    ]
    write_events(es, alias, events)
    recording = RecordingClient(es)
    client: Elasticsearch = recording  # type: ignore[assignment]
    now = Instant.parse("2026-07-02T00:00:00Z")

    a = CrossSessionSearcher(client, alias=alias, user_id="u", cursor_key=KEY, max_result_window=20)
    first = a.search("we decided")
    a.search("we decided", cursor=first.next_cursor)
    hopped = a.search("we decided", page=5).items  # past the window: hops
    assert [item.event_id for item in hopped] == [f"e{i:03d}" for i in range(50, 60)]
    b = ConversationSearcher(client, alias=alias, user_id="u", session_id="s1", cursor_key=KEY)
    b.search("decided", cursor=b.search("decided").next_cursor)
    c = CrossConversationSearcher(
        client,
        alias=alias,
        user_id="u",
        contact_id="c",
        inbox_id="i",
        settings=CrossConversationSettings(enabled=True),
        cursor_key=KEY,
        now=lambda: now,
    )
    first = c.search("we decided", current_session_id="s0")
    second = c.search("we decided", current_session_id="s0", cursor=first.next_cursor).items
    assert [item.event_id for item in second] == [f"e{i:03d}" for i in range(10, 20)]

    calls = recording.calls
    assert calls and set(calls) <= {"search", "msearch", "field_caps"}, calls
    assert "field_caps" in calls  # the first page's windows
