"""Recall cost does not grow with the months stored: a cursor page deep in a 24-month
history carries the range of its position, and Elasticsearch's pre-filter skips the
partitions before it, as `_shards.skipped` in the real response shows."""

from typing import Any

import pytest
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.recall import CrossSessionSearcher
from tests.support.events import event, write_events
from tests.support.pages import served

pytestmark = pytest.mark.integration

KEY = b"skipping-test-cursor-key-32bytes"
MONTHS = [f"{2024 + (7 + m) // 12}-{(7 + m) % 12 + 1:02d}" for m in range(24)]  # 2024-08 on
PER_MONTH = 5


class KeepsResponses:
    """A client seam: passes searches on and keeps each response's `_shards`."""

    def __init__(self, client: Elasticsearch) -> None:
        self._client = client
        self.shards: list[dict[str, Any]] = []

    def search(self, **kwargs: Any) -> Any:
        response = self._client.search(**kwargs)
        self.shards.append(response.body["_shards"])
        return response

    def msearch(self, **kwargs: Any) -> Any:
        response = self._client.msearch(**kwargs)
        self.shards += [answer["_shards"] for answer in response.body["responses"]]
        return response

    def field_caps(self, **kwargs: Any) -> Any:
        return self._client.field_caps(**kwargs)


def test_a_late_cursor_page_skips_the_earlier_monthly_partitions(es: Elasticsearch, alias: str):
    history = [
        event(f"{month}-{n}", user_id="heavy", session_id="s", text="we decided",
              timestamp=Instant.parse(f"{month}-{10 + n:02d}T12:00:00Z"))
        for month in MONTHS
        for n in range(PER_MONTH)
    ]  # fmt: skip
    write_events(es, alias, history)
    seam = KeepsResponses(es)
    searcher = CrossSessionSearcher(
        seam,  # type: ignore[arg-type]  # the seam answers the two calls recall makes
        alias=alias,
        user_id="heavy",
        cursor_key=KEY,
        page_size=10,
    )

    assert served(searcher, "we decided") == [e["event_id"] for e in history]
    last = seam.shards[-1]  # the last page: its range starts in the 22nd month
    assert last["total"] >= 24 and last["failed"] == 0
    assert last["skipped"] >= 20, last


def test_the_first_page_looks_for_the_latest_match_in_the_newest_partition_only(
    es: Elasticsearch, alias: str
):
    # An active user: 24 months of history, and what they said a minute ago. The first
    # page's latest-match search (it freezes the cursor chain) reaches back one day, so
    # the older partitions are skipped; the chain still ends with the newest event.
    now = Instant.now()
    history = [
        event(f"{month}-{n}", user_id="active", session_id="s", text="we decided",
              timestamp=Instant.parse(f"{month}-{10 + n:02d}T12:00:00Z"))
        for month in MONTHS
        for n in range(PER_MONTH)
    ]  # fmt: skip
    latest = event("just-now", user_id="active", session_id="s", text="we decided",
                   timestamp=Instant(now.nanos - 60 * 10**9))  # fmt: skip
    write_events(es, alias, [*history, latest])
    seam = KeepsResponses(es)
    searcher = CrossSessionSearcher(
        seam,  # type: ignore[arg-type]  # the seam answers the two calls recall makes
        alias=alias,
        user_id="active",
        cursor_key=KEY,
        page_size=10,
    )

    first = searcher.search("we decided")
    latest_search = seam.shards[1]  # the first msearch: the page's first window, the latest
    assert latest_search["total"] >= 25 and latest_search["skipped"] >= 23, latest_search
    assert first.next_cursor is not None
    assert served(searcher, "we decided") == [e["event_id"] for e in [*history, latest]]


def test_without_a_recent_match_the_chain_is_still_frozen_at_the_latest_match(
    es: Elasticsearch, alias: str
):
    # No match in the last day: the latest match is looked for over the whole history
    # (a second request), and an event that arrives during the chain, stamped after it
    # but long before today, stays out of the chain.
    history = [
        event(f"old-{n:02d}", user_id="quiet", session_id="s", text="we decided",
              timestamp=Instant.parse(f"2025-03-{1 + n:02d}T12:00:00Z"))
        for n in range(15)
    ]  # fmt: skip
    write_events(es, alias, history)
    seam = KeepsResponses(es)
    searcher = CrossSessionSearcher(
        seam,  # type: ignore[arg-type]  # the seam answers the two calls recall makes
        alias=alias,
        user_id="quiet",
        cursor_key=KEY,
        page_size=10,
    )
    first = searcher.search("we decided")
    assert len(seam.shards) == 3  # the msearch's two answers, then the whole-history look
    # (one partition: one window, the open one)
    late = event("late", user_id="quiet", session_id="s", text="we decided",
                 timestamp=Instant.parse("2025-04-01T12:00:00Z"))  # fmt: skip
    write_events(es, alias, [late])
    assert first.next_cursor is not None
    rest = searcher.search("we decided", cursor=first.next_cursor)
    assert [i.event_id for i in [*first.items, *rest.items]] == [e["event_id"] for e in history]
    assert rest.next_cursor is None


def test_a_first_page_searches_the_oldest_partitions_only(es: Elasticsearch, alias: str):
    # 20 events a month over 24 months: the first page of 10 lies in the first month,
    # and its search skips every other partition.
    history = [
        event(f"{month}-{n:02d}", user_id="long", session_id="s", text="we decided",
              timestamp=Instant.parse(f"{month}-{1 + n:02d}T12:00:00Z"))
        for month in MONTHS
        for n in range(20)
    ]  # fmt: skip
    write_events(es, alias, history)
    seam = KeepsResponses(es)
    searcher = CrossSessionSearcher(
        seam,  # type: ignore[arg-type]  # the seam answers the calls recall makes
        alias=alias,
        user_id="long",
        cursor_key=KEY,
        page_size=10,
    )
    first = searcher.search("we decided")
    assert [i.event_id for i in first.items] == [e["event_id"] for e in history[:10]]
    page = seam.shards[0]
    assert page["total"] >= 24 and page["failed"] == 0
    assert page["skipped"] >= 23, page
