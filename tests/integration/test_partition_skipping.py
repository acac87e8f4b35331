"""Recall cost does not grow with the months stored: a cursor page deep in a 24-month
history carries the range of its position, and Elasticsearch's pre-filter skips the
partitions before it, as `_shards.skipped` in the real response shows."""

from typing import Any

import pytest
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.recall import CrossSessionSearcher
from tests.support.events import Event, event, write_events
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


def monthly(user_id: str, per_month: int, first_day: int = 10) -> list[Event]:
    """`per_month` matches a day apart in each of the 24 months, oldest first."""
    return [
        event(f"{month}-{n:02d}", user_id=user_id, session_id="s", text="we decided",
              timestamp=Instant.parse(f"{month}-{first_day + n:02d}T12:00:00Z"))
        for month in MONTHS
        for n in range(per_month)
    ]  # fmt: skip


def watched(
    es: Elasticsearch, alias: str, user_id: str
) -> tuple[KeepsResponses, CrossSessionSearcher]:
    """A searcher of `user_id`'s sessions whose client keeps each response's `_shards`."""
    seam = KeepsResponses(es)
    searcher = CrossSessionSearcher(
        seam,  # type: ignore[arg-type]  # the seam answers the calls recall makes
        alias=alias,
        user_id=user_id,
        cursor_key=KEY,
        page_size=10,
    )
    return seam, searcher


def test_a_late_cursor_page_skips_the_earlier_monthly_partitions(es: Elasticsearch, alias: str):
    history = monthly("heavy", PER_MONTH)
    write_events(es, alias, history)
    seam, searcher = watched(es, alias, "heavy")

    assert served(searcher, "we decided") == [e["event_id"] for e in history]
    last = seam.shards[-1]  # the last page: its range starts in the 22nd month
    assert last["total"] >= 24 and last["failed"] == 0
    assert last["skipped"] >= 20, last


def test_the_first_page_looks_for_the_latest_match_in_the_newest_partitions_only(
    es: Elasticsearch, alias: str
):
    # An active user: 24 months of history, and what they said a minute ago. The first
    # page's latest-match search (it freezes the cursor chain) reaches back over the two
    # newest partitions (and the last day), so the older partitions are skipped; the
    # chain still ends with the newest event.
    now = Instant.now()
    history = monthly("active", PER_MONTH)
    latest = event("just-now", user_id="active", session_id="s", text="we decided",
                   timestamp=Instant(now.nanos - 60 * 10**9))  # fmt: skip
    write_events(es, alias, [*history, latest])
    seam, searcher = watched(es, alias, "active")

    first = searcher.search("we decided")
    latest_search = seam.shards[1]  # the first msearch: the page's first window, the latest
    assert latest_search["total"] >= 25 and latest_search["skipped"] >= 23, latest_search
    assert first.next_cursor is not None
    assert served(searcher, "we decided") == [e["event_id"] for e in [*history, latest]]


def test_without_a_recent_match_the_chain_is_still_frozen_at_the_latest_match(
    es: Elasticsearch, alias: str
):
    # No match in the two newest partitions (this month's, which setup made, and June's,
    # where only someone else spoke): the latest match is looked for further back (a
    # second request), and an event that arrives during the chain, stamped after it but
    # long before today, stays out of the chain.
    history = [
        event(f"old-{n:02d}", user_id="quiet", session_id="s", text="we decided",
              timestamp=Instant.parse(f"2025-03-{1 + n:02d}T12:00:00Z"))
        for n in range(15)
    ]  # fmt: skip
    other = event("other", user_id="someone-else", session_id="s", text="we decided",
                  timestamp=Instant.parse("2025-06-01T12:00:00Z"))  # fmt: skip
    write_events(es, alias, [*history, other])
    seam, searcher = watched(es, alias, "quiet")
    first = searcher.search("we decided")
    # The msearch's two answers, then one look further back, over everything.
    assert len(seam.shards) == 3, seam.shards
    late = event("late", user_id="quiet", session_id="s", text="we decided",
                 timestamp=Instant.parse("2025-04-01T12:00:00Z"))  # fmt: skip
    write_events(es, alias, [late])
    assert first.next_cursor is not None
    rest = searcher.search("we decided", cursor=first.next_cursor)
    assert [i.event_id for i in [*first.items, *rest.items]] == [e["event_id"] for e in history]
    assert rest.next_cursor is None


def test_a_page_searches_only_the_partitions_its_hits_are_in(es: Elasticsearch, alias: str):
    # 20 events a month over 24 months: the first page of 10 lies in the first month,
    # and its search skips every other partition; so does every cursor page's.
    history = monthly("long", 20, first_day=1)
    write_events(es, alias, history)
    seam, searcher = watched(es, alias, "long")
    first = searcher.search("we decided")
    assert [i.event_id for i in first.items] == [e["event_id"] for e in history[:10]]
    page = seam.shards[0]
    assert page["total"] >= 24 and page["failed"] == 0
    assert page["skipped"] >= 23, page
    # Every cursor page after it reads from its position to the month after at most:
    # a page of 10 never spans more than two months of 20.
    assert served(searcher, "we decided") == [e["event_id"] for e in history]
    assert all(search["skipped"] >= search["total"] - 2 for search in seam.shards), seam.shards


def test_the_latest_match_of_a_quiet_user_is_found_in_the_newest_partitions(
    es: Elasticsearch, alias: str
):
    # Nothing in the last day, nor this month (its partition is empty): the first
    # page's look over the two newest partitions finds the latest match in July 2026, in
    # the same trip as the page, and skips the other 23 months. 20 matches a month: the
    # first page needs one window.
    history = monthly("dormant", 20, first_day=1)
    write_events(es, alias, history)
    seam, searcher = watched(es, alias, "dormant")
    first = searcher.search("we decided")
    assert len(seam.shards) == 2, seam.shards  # one trip: the page, the latest match
    latest_search = seam.shards[1]
    assert latest_search["total"] >= 25 and latest_search["skipped"] >= 23, latest_search
    assert first.next_cursor is not None
    assert served(searcher, "we decided") == [e["event_id"] for e in history]


def test_a_look_back_the_first_pages_look_covered_is_not_sent_again(es: Elasticsearch, alias: str):
    # The two newest partitions are this month's (empty) and July 2026's, where only
    # another user spoke: the first page's look covers both and finds nothing of this
    # user. The look further back starts at the next window (the newest four
    # partitions', from April 2026), not again at either of theirs; it finds May's.
    history = [e for e in monthly("looked-back", 20, first_day=1) if e["event_id"] < "2026-06"]
    july = event("other-1", user_id="another-user", session_id="s", text="we decided",
                 timestamp=Instant.parse("2026-07-15T12:00:00Z"))  # fmt: skip
    write_events(es, alias, [*history, july])
    seam, searcher = watched(es, alias, "looked-back")
    first = searcher.search("we decided")
    # The msearch's two (the page, the first look), then one look back; sent again,
    # the two covered windows would come first, for five.
    assert len(seam.shards) == 3, seam.shards
    assert first.next_cursor is not None
    assert served(searcher, "we decided") == [e["event_id"] for e in history]
