"""One event of a user, whole, by its id: how an event whose text a tool's answer cut
(`RecallItem.full_length`) is read back, payload included.

An id a producer reused at another instant is another event (the alias's identity rule),
so a read by id answers every event of the user with that id, oldest first: almost
always one.
"""

from elasticsearch import Elasticsearch

from session_recall.core.user_filter import user_filter
from session_recall.recall import transport
from session_recall.recall.page import RecallPage
from session_recall.recall.pager import item_of
from session_recall.recall.query import READ_SOURCE, SORT, Body
from session_recall.recall.scope import required

# Events of one user sharing one id: a producer's reuse, a handful at most. The bound
# keeps a read by id one bounded request whatever a producer did.
MAX_COPIES = 10


def event_body(*, user_id: str, event_id: str) -> Body:
    """The user's events of id `event_id`, whole, oldest first."""
    return {
        "query": {"bool": {"filter": user_filter(user_id, event_id=event_id)}},
        "sort": SORT,
        "track_total_hits": False,
        "_source": READ_SOURCE,
        "size": MAX_COPIES,
    }


class EventReader:
    """Reads the events of the user it is built for, and no one else's, by their id:
    every request is pinned to the user and routed to its shard."""

    def __init__(
        self,
        client: Elasticsearch,
        *,
        alias: str,
        user_id: str,
        search_timeout: float | None = None,
    ) -> None:
        self._client = client
        self._alias = alias
        self._user_id = required("user_id", user_id)
        self._search_timeout = search_timeout

    def read(self, event_id: str) -> RecallPage:
        """The events of id `event_id`, whole (text and payload), oldest first; none
        when the user has no such event."""
        body = event_body(user_id=self._user_id, event_id=required("event_id", event_id))
        response = transport.search(
            self._client,
            alias=self._alias,
            body=body,
            routing=self._user_id,
            timeout=self._search_timeout,
        )
        return RecallPage(items=[item_of(hit) for hit in transport.hits(response)])
