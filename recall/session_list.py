"""A user's sessions, listed by the engine: one composite aggregation per page.

Each session comes with its first and last instant and its number of events, in
session id order. A page asks for one session more than it returns, so `next_cursor`
(the last session id served) is handed out only when there is a next page; passed
back as `cursor`, as every page's next cursor is, it resumes the
aggregation past the last session served, so a deep page costs what the first does.

The instants are the sort values of each session's first and last event (`top_hits`),
to the nanosecond: a `min` or `max` aggregation on date_nanos reports milliseconds.
The aggregation's sub-aggregations run only for the sessions of the page.
"""

from typing import Any

from elasticsearch import Elasticsearch
from pydantic import BaseModel, ConfigDict

from session_recall.core.instant import Instant
from session_recall.core.user_filter import user_filter
from session_recall.recall import transport
from session_recall.recall.pager import checked_page_size
from session_recall.recall.query import Body
from session_recall.recall.scope import required


class SessionSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str
    first: Instant
    last: Instant
    events: int


class SessionsPage(BaseModel):
    """Sessions in session id order; `next_cursor` is None on the last page."""

    model_config = ConfigDict(frozen=True)

    items: list[SessionSummary]
    next_cursor: str | None = None


def _edge(order: str) -> Body:
    return {"top_hits": {"size": 1, "sort": [{"timestamp": order}], "_source": False}}


def sessions_body(*, user_id: str, size: int, after: str | None = None) -> Body:
    """Up to `size` sessions of the user whose id sorts after `after`."""
    composite: Body = {
        "size": size,
        "sources": [{"session_id": {"terms": {"field": "session_id"}}}],
    }
    if after is not None:
        composite["after"] = {"session_id": after}
    return {
        "size": 0,
        "track_total_hits": False,
        "query": {"bool": {"filter": user_filter(user_id)}},
        "aggs": {
            "sessions": {
                "composite": composite,
                "aggs": {"first": _edge("asc"), "last": _edge("desc")},
            }
        },
    }


def sessions_page(response: Body, size: int) -> SessionsPage:
    """The page out of a response to `sessions_body(size=size + 1)`."""
    buckets: list[dict[str, Any]] = (
        response.get("aggregations", {}).get("sessions", {}).get("buckets", [])
    )
    items = [_summary(bucket) for bucket in buckets[:size]]
    more = len(buckets) > size
    return SessionsPage(items=items, next_cursor=items[-1].session_id if more else None)


def _summary(bucket: dict[str, Any]) -> SessionSummary:
    def instant(edge: str) -> Instant:
        return Instant(int(bucket[edge]["hits"]["hits"][0]["sort"][0]))

    return SessionSummary(
        session_id=str(bucket["key"]["session_id"]),
        first=instant("first"),
        last=instant("last"),
        events=int(bucket["doc_count"]),
    )


class SessionLister:
    """Lists the sessions of the user it is built for, and no one else's: every request
    is pinned to the user and routed to its shard."""

    def __init__(
        self,
        client: Elasticsearch,
        *,
        alias: str,
        user_id: str,
        page_size: int | None = None,
        search_timeout: float | None = None,
    ) -> None:
        self._client = client
        self._alias = alias
        self._user_id = required("user_id", user_id)
        self.page_size = checked_page_size(page_size)
        self._search_timeout = search_timeout

    def list(self, *, cursor: str | None = None) -> SessionsPage:
        """The first page, or the page after `cursor` (a page's `next_cursor`: the
        session id it ended at). An empty `cursor` is none."""
        after = cursor if cursor is not None and cursor.strip() else None
        size = self.page_size
        body = sessions_body(user_id=self._user_id, size=size + 1, after=after)
        response = transport.search(
            self._client,
            alias=self._alias,
            body=body,
            routing=self._user_id,
            timeout=self._search_timeout,
        )
        return sessions_page(response, size)
