"""`SessionRecallSession`: the OpenAI Agents SDK's `Session` protocol for one
`(user, session)`, its history stored as events and searchable with memory_search.

- `add_items` stores each item as an event (`items.item_event`), stamped in the
  order given, searchable when the call returns.
- `get_items(limit)` returns the latest `limit` items (all when None, or the
  `session_settings` limit), oldest first, each exactly as it was added.
- `pop_item` removes and returns the latest item. It deletes the event on the
  condition that nobody changed or removed it since it was read (`if_seq_no`): of two
  concurrent pops, one wins each item and the other takes the next.
- `get_items(limit)` counts events: an event of another surface that is no SDK item
  (a tool call stored by `ingest`) takes a place and is left out.

A session without `store=` makes a client of its own: an application with many
sessions builds one `EventStore` and passes it to each.
- `clear_session` erases the session through the erasure path; items added after
  it are kept.

Each call runs off the event loop (`asyncio.to_thread`) within the store's deadline.
"""

import asyncio
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from agents.memory import SessionABC
from agents.memory.session_settings import (
    SessionSettings,
    coerce_session_settings,
    resolve_session_limit,
)
from elasticsearch import ApiError, ConflictError, NotFoundError, TransportError

from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.indexer import IndexerError, Scope, forgetting
from session_recall.indexer.deadline import Deadline
from session_recall.integrations.openai_agents.items import item_event, stored_item
from session_recall.integrations.store import DEFAULT_TIMEOUT_S, EventStore
from session_recall.recall import MemorySearcher, transport
from session_recall.recall.scope import required

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

_SOURCE = ["payload", "type", "text"]
_PAGE = 500  # events read a request when the whole history is asked for
_POP_WINDOW = 8  # the latest events a pop tries, newest first, before it reads again


class _Clock:
    """Instants that only move forward within this process, so items added in one
    call, or in quick succession, keep their order."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def next(self) -> Instant:
        with self._lock:
            self._last = max(time.time_ns(), self._last + 1)
            return Instant(self._last)


_CLOCK = _Clock()


class SessionRecallSession(SessionABC):
    """The SDK's session `session_id` of `user_id`. `settings` default to the
    environment's; `index` overrides the alias; `store` shares one client between
    many sessions (it wins over `settings`, `index` and `timeout`)."""

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        user_id: str,
        settings: Settings | None = None,
        index: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        store: EventStore | None = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        # Both ids are checked now (`InvalidScope`), not at the first call.
        self.session_id = required("session_id", session_id)
        self.user_id = required("user_id", user_id)
        self._store = store or EventStore(settings, index=index, timeout=timeout)
        self.session_settings = (
            SessionSettings()
            if session_settings is None
            else coerce_session_settings(session_settings)
        )

    def memory(self) -> MemorySearcher:
        """memory_search over every session of this session's user (for
        `memory_search_tool`)."""
        return self._store.memory(self.user_id)

    async def get_items(self, limit: int | None = None) -> list["TResponseInputItem"]:
        count = resolve_session_limit(limit, self.session_settings)
        hits = await asyncio.to_thread(self._read, count)
        items = [item for hit in hits if (item := stored_item(hit["_source"])) is not None]
        return items  # type: ignore[return-value]  # the SDK's items are JSON objects

    async def add_items(self, items: list["TResponseInputItem"]) -> None:
        events = [
            item_event(
                item,
                user_id=self.user_id,
                session_id=self.session_id,
                event_id=f"oai-{uuid.uuid4().hex}",
                at=_CLOCK.next(),
            )
            for item in items
        ]
        await asyncio.to_thread(self._store.store, events)

    async def pop_item(self) -> "TResponseInputItem | None":
        return await asyncio.to_thread(self._pop)

    async def clear_session(self) -> None:
        await asyncio.to_thread(self._store.erase, Scope.session(self.user_id, self.session_id))

    def _search(self, *, size: int, newest_first: bool, after: list[Any] | None = None) -> Any:
        """A page of this session's events, pinned to its user and session and routed
        to its user's shard; errors are the recall layer's (a missing alias names
        `session-recall setup`, a node that does not answer says to retry)."""
        order = event_order()
        if newest_first:
            order = [{field: "desc" for field in key} for key in order]
        body: dict[str, Any] = {
            "query": {
                "bool": {
                    "filter": [
                        {"term": {"user_id": self.user_id}},
                        {"term": {"session_id": self.session_id}},
                    ]
                }
            },
            "sort": order,
            "size": size,
            "_source": _SOURCE,
            "track_total_hits": False,
            "seq_no_primary_term": newest_first,
        }
        if after is not None:
            body["search_after"] = after
        answer = transport.search(
            self._store.client,
            alias=self._store.alias,
            body=body,
            routing=self.user_id,
            timeout=self._store.timeout,
        )
        return transport.hits(answer)

    def _latest(self, count: int) -> list[dict[str, Any]]:
        """The latest `count` events, oldest first."""
        if count <= 0:
            return []
        hits: list[dict[str, Any]] = []
        after = None
        while len(hits) < count:
            size = min(_PAGE, count - len(hits))
            page = self._search(size=size, newest_first=True, after=after)
            hits += page
            if len(page) < size:  # the session's first event is in it
                break
            after = page[-1]["sort"]
        return hits[::-1]

    def _read(self, count: int | None) -> list[dict[str, Any]]:
        return self._all() if count is None else self._latest(count)

    def _all(self) -> list[dict[str, Any]]:
        hits: list[dict[str, Any]] = []
        after = None
        while page := self._search(size=_PAGE, newest_first=False, after=after):
            hits += page
            after = page[-1]["sort"]
        return hits

    def _pop(self) -> "TResponseInputItem | None":
        """Claim the newest item: the first of the newest events that this call deletes
        itself. One taken by a concurrent pop meanwhile is passed over for the next, so
        each item is returned once; the whole claim ends within the store's deadline."""
        deadline = Deadline.after(self._store.timeout)
        after = None
        while hits := self._search(size=_POP_WINDOW, newest_first=True, after=after):
            for hit in hits:
                item = stored_item(hit["_source"])
                if item is None:
                    continue  # an event of another surface that is no item is left alone
                # Once claimed, it is gone for reads, and from the turns' contexts too.
                store = self._store
                with forgetting(store.client, store.alias, self.user_id, [hit["_id"]]):
                    claimed = self._claim(hit, deadline)
                if claimed:
                    return item  # type: ignore[return-value]
            after = hits[-1]["sort"]  # all taken meanwhile, or none an item: look further back
        return None

    def _claim(self, hit: dict[str, Any], deadline: Deadline) -> bool:
        """Delete `hit`'s event if it is still there: True when this call deleted it,
        False when another pop did. The delete is conditional on the version read, and
        never sent twice by the client: a resend after a lost answer would find it gone
        and pass it over as taken, losing the item."""
        client = self._store.client.options(max_retries=0)
        where = {"index": hit["_index"], "id": hit["_id"], "routing": self.user_id}
        version = {"if_seq_no": hit["_seq_no"], "if_primary_term": hit["_primary_term"]}
        while deadline.allows():
            try:
                client.delete(**where, **version)
                return True
            except NotFoundError:
                return False
            except ConflictError:  # changed since it was read: by a pop, or enrichment
                try:
                    current = client.get(**where, source=False)
                except NotFoundError:
                    return False
                version = {
                    "if_seq_no": current["_seq_no"],
                    "if_primary_term": current["_primary_term"],
                }
            except (ApiError, TransportError) as err:
                raise IndexerError(
                    f"Elasticsearch did not confirm the removal of the latest item of "
                    f"session {self.session_id!r} ({type(err).__name__}): it may or may not "
                    "have been removed.",
                    hint="Read the session (get_items) to see whether it is still there, "
                    "then pop again if it is; check the node and the credentials' "
                    "privileges (delete on the alias).",
                ) from None
        raise IndexerError(
            f"Popping from session {self.session_id!r} did not finish within "
            f"{self._store.timeout:g} s: other writers kept changing its latest items.",
            hint="Nothing was popped; pop again.",
        )
