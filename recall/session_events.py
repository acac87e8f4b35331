"""One session's events as the adapters read them: in order (all, or the latest few),
newest first with their versions (for a pop), and the instants events already have.

Every request is pinned to the user (`core.user_filter`) and routed to its shard;
errors are the recall layer's (`transport`: a missing alias names `session-recall
setup`, a node that does not answer says to retry).
"""

from collections.abc import Iterator, Sequence
from typing import Any

from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.core.user_filter import user_filter
from session_recall.recall import transport
from session_recall.recall.query import Body

PAGE = 500  # events read a request when a whole history is asked for
Hit = dict[str, Any]


def session_page_body(
    user_id: str,
    session_id: str,
    *,
    size: int,
    newest_first: bool,
    after: list[Any] | None = None,
    source: Sequence[str],
) -> Body:
    """A page of the session's events in the event order (newest first, with the
    version each was read at, for a conditional delete), after `after`."""
    order = event_order()
    if newest_first:
        order = [{field: "desc" for field in key} for key in order]
    body: Body = {
        "query": {"bool": {"filter": user_filter(user_id, session_id=session_id)}},
        "sort": order,
        "size": size,
        "_source": list(source),
        "track_total_hits": False,
        "seq_no_primary_term": newest_first,
    }
    if after is not None:
        body["search_after"] = after
    return body


class SessionEvents:
    """The events of `session_id` of `user_id` behind `alias`, each request within
    `timeout` seconds."""

    def __init__(
        self,
        client: Elasticsearch,
        alias: str,
        *,
        user_id: str,
        session_id: str,
        timeout: float,
    ) -> None:
        self._client, self._alias, self._timeout = client, alias, timeout
        self._user_id, self._session_id = user_id, session_id

    def page(
        self,
        *,
        size: int,
        newest_first: bool,
        after: list[Any] | None = None,
        source: Sequence[str],
    ) -> list[Hit]:
        body = session_page_body(
            self._user_id, self._session_id, size=size, newest_first=newest_first,
            after=after, source=source,
        )  # fmt: skip
        answer = transport.search(
            self._client, alias=self._alias, body=body, routing=self._user_id,
            timeout=self._timeout,
        )  # fmt: skip
        return transport.hits(answer)

    def in_order(self, count: int | None, *, source: Sequence[str]) -> list[Hit]:
        """The session's events oldest first: all of them (None), or the latest `count`."""
        return self._all(source) if count is None else self._latest(count, source)

    def newest_first(self, *, window: int, source: Sequence[str]) -> Iterator[list[Hit]]:
        """Pages of `window` events from the newest back, with their versions."""
        after = None
        while hits := self.page(size=window, newest_first=True, after=after, source=source):
            yield hits
            after = hits[-1]["sort"]

    def _latest(self, count: int, source: Sequence[str]) -> list[Hit]:
        if count <= 0:
            return []
        hits: list[Hit] = []
        after = None
        while len(hits) < count:
            size = min(PAGE, count - len(hits))
            page = self.page(size=size, newest_first=True, after=after, source=source)
            hits += page
            if len(page) < size:  # the session's first event is in it
                break
            after = page[-1]["sort"]
        return hits[::-1]

    def _all(self, source: Sequence[str]) -> list[Hit]:
        hits: list[Hit] = []
        after = None
        while page := self.page(size=PAGE, newest_first=False, after=after, source=source):
            hits += page
            after = page[-1]["sort"]
        return hits


def instants_body(user_id: str, event_ids: Sequence[str], *, session_id: str | None) -> Body:
    """The earliest stored copy of each of `event_ids` of the user (in the session)."""
    where = [*user_filter(user_id, session_id=session_id), {"terms": {"event_id": list(event_ids)}}]
    return {
        "query": {"bool": {"filter": where}},
        "collapse": {"field": "event_id"},  # the earliest copy of each id
        "sort": [{"timestamp": "asc"}],
        "size": len(event_ids),
        "_source": ["event_id"],
        "track_total_hits": False,
    }


def stored_instants(
    client: Elasticsearch,
    alias: str,
    user_id: str,
    event_ids: Sequence[str],
    *,
    session_id: str | None,
    timeout: float,
) -> dict[str, Instant]:
    """The instant each of `event_ids` has in its earliest stored copy; ids not stored
    are left out."""
    body = instants_body(user_id, event_ids, session_id=session_id)
    answer = transport.search(client, alias=alias, body=body, routing=user_id, timeout=timeout)
    return {hit["_source"]["event_id"]: Instant(hit["sort"][0]) for hit in transport.hits(answer)}
