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
