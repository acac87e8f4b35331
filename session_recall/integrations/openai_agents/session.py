"""`SessionRecallSession`: the OpenAI Agents SDK's `Session` protocol for one
`(user, session)`, its history stored as events and searchable with memory_search.

- `add_items` stores each item as an event (`items.item_event`), stamped in the
  order given and after the session's last erasure (whichever host's clock made it),
  searchable when the call returns. All of the call's items are stored or none: a
  function call is never kept without its output, and a failed call may be retried.
- `get_items(limit)` returns the latest `limit` items (all when None, or the
  `session_settings` limit), oldest first, each exactly as it was added.
- `pop_item` removes and returns the latest item. It deletes the event on the
  condition that nobody changed or removed it since it was read (`if_seq_no`): of two
  concurrent pops, one wins each item and the other takes the next. A pop whose
  caller is cancelled (`asyncio.wait_for`) stops before its delete, or puts the item
  back after it: an item leaves the session only for a caller that receives it.
- `get_items(limit)` counts events: an event of another surface that is no SDK item
  (a tool call stored by `ingest`) takes a place and is left out.

A session without `store=` makes a client of its own: an application with many
sessions builds one `EventStore` and passes it to each.
- `clear_session` erases the session through the erasure path; items added after
  it are kept.

Each call runs off the event loop (`asyncio.to_thread`) within the store's deadline.
"""

import asyncio
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents.memory import SessionABC
from agents.memory.session_settings import (
    SessionSettings,
    coerce_session_settings,
    resolve_session_limit,
)
from pydantic import ValidationError

from session_recall.config import Settings
from session_recall.core.errors import SessionRecallError
from session_recall.core.instant import Instant
from session_recall.indexer import (
    Deadline,
    Event,
    InvalidEvent,
    MemoryWriter,
    Scope,
    claim,
    explain,
)
from session_recall.integrations.openai_agents.items import item_event, stored_item
from session_recall.integrations.store import DEFAULT_TIMEOUT_S, EventStore
from session_recall.recall import CrossSessionSearcher, MemoriesSearcher, MemorySearcher, required

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

log = logging.getLogger(__name__)

_SOURCE = ["payload", "type", "text"]
# What a pop reads of an event: enough to put it back whole (`_put_back`), but the
# fields enrichment derives again (stems, vectors).
_EVENT_SOURCE = [*Event.model_fields]
_POP_WINDOW = 8  # the latest events a pop tries, newest first, before it reads again


class _Clock:
    """Instants that only move forward within this process, so items added in one
    call, or in quick succession, keep their order; and past an instant given (the
    session's last erasure), so that what is added after it is kept."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def next(self, after: Instant | None = None) -> Instant:
        with self._lock:
            floor = 0 if after is None else after.nanos + 1
            self._last = max(time.time_ns(), self._last + 1, floor)
            return Instant(self._last)


_CLOCK = _Clock()


@dataclass(frozen=True, slots=True)
class _Popped:
    item: Any
    event: dict[str, Any]  # the event's stored fields, to put it back with


class _Handover:
    """Between a pop's caller and its worker thread: the caller may give up (its task
    cancelled) at any time, the worker may hand an item over once. Whoever comes
    second knows the item has no taker, and puts it back."""

    def __init__(self) -> None:
        self.abandoned = threading.Event()  # no delete is sent once set
        self._lock = threading.Lock()
        self._handed: _Popped | None = None

    def hand_over(self, popped: _Popped) -> bool:
        """The worker's: False when the caller is gone (the worker puts it back)."""
        with self._lock:
            if self.abandoned.is_set():
                return False
            self._handed = popped
            return True

    def abandon(self) -> _Popped | None:
        """The caller's: what was handed over meanwhile, for the caller to put back."""
        with self._lock:
            self.abandoned.set()
            return self._handed


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
        self._history = self._store.session_events(self.user_id, self.session_id)
        self.session_settings = (
            SessionSettings()
            if session_settings is None
            else coerce_session_settings(session_settings)
        )

    def memory(self) -> MemorySearcher:
        """memory_search over every session of this session's user (for
        `memory_search_tool`)."""
        return self._store.memory(self.user_id)

    def cross_session(self) -> CrossSessionSearcher:
        """cross_session_search over every session of this session's user (for
        `cross_session_search_tool`: a background agent's mining)."""
        return self._store.searchers.cross_session(user_id=self.user_id)

    def memories(self, *, keywords_only: bool = False) -> MemoriesSearcher:
        """This user's kept memories (for `recall_memories_tool`); `keywords_only`
        searches them without the embedder."""
        if keywords_only:
            return self._store.keyword_memories(self.user_id)
        return self._store.memories(self.user_id)

    def memory_writer(self) -> MemoryWriter:
        """save_memory and retire_memory as this session's user (for
        `save_memory_tool` and `retire_memory_tool`)."""
        return self._store.memory_writer(self.user_id)

    async def get_items(self, limit: int | None = None) -> list["TResponseInputItem"]:
        count = resolve_session_limit(limit, self.session_settings)
        hits = await asyncio.to_thread(self._read, count)
        items = [item for hit in hits if (item := stored_item(hit["_source"])) is not None]
        return items  # type: ignore[return-value]  # the SDK's items are JSON objects

    async def add_items(self, items: list["TResponseInputItem"]) -> None:
        events = self._events(items)  # every item checked before any request
        if events:
            await asyncio.to_thread(self._add, items, events)

    def _events(self, items: list[Any], after: Instant | None = None) -> list[Event]:
        """Each item's event, stamped in order after `after`. Raises `TypeError` for an
        item that is no JSON object and `InvalidEvent` for one JSON cannot hold."""
        events = []
        for position, item in enumerate(items, 1):
            try:
                events.append(
                    item_event(
                        item,
                        user_id=self.user_id,
                        session_id=self.session_id,
                        event_id=f"oai-{uuid.uuid4().hex}",
                        at=_CLOCK.next(after),
                    )
                )
            except ValidationError as err:
                raise InvalidEvent(
                    f"Item {position} of {len(items)} cannot be stored: {explain(err)}.",
                    hint="Nothing was stored; fix the item and add the items again.",
                ) from None
        return events

    def _add(self, items: list[Any], events: list[Event]) -> None:
        # An erasure covers what is stamped up to its instant, by the erasing host's
        # clock: items stamped by a clock behind it would be refused as erased.
        scopes = (Scope.user(self.user_id), Scope.session(self.user_id, self.session_id))
        after = self._store.last_erasure(scopes)
        if after is not None and events[0].timestamp <= after:
            events = self._events(items, after)
        self._store.store_all(events)

    async def pop_item(self) -> "TResponseInputItem | None":
        handover = _Handover()
        try:
            return await asyncio.to_thread(self._pop, handover)
        except asyncio.CancelledError:
            # Nobody takes the item now: the pop stops before its delete, or, past it,
            # the worker puts the item back; if it was handed over already, here.
            handed = handover.abandon()
            if handed is not None:
                # Not on the event loop; not a daemon, so the interpreter waits for it.
                threading.Thread(target=self._put_back, args=(handed,), name="pop").start()
            raise

    def _put_back(self, popped: _Popped) -> None:
        """Store a popped event again as it was (same id, same instant): unless its
        session was erased since, which the writer refuses, as it should."""
        try:
            self._store.store([Event.model_validate(popped.event)])
        except SessionRecallError as err:
            log.error(
                "A pop of session %r was cancelled after its delete, and its item could "
                "not be put back: %s",
                self.session_id,
                err,
            )

    async def clear_session(self) -> None:
        await asyncio.to_thread(self._store.erase, Scope.session(self.user_id, self.session_id))

    def _read(self, count: int | None) -> list[dict[str, Any]]:
        return self._history.in_order(count, source=_SOURCE)

    def _pop(self, handover: _Handover) -> "TResponseInputItem | None":
        """Claim the newest item: the first of the newest events that this call deletes
        itself. One taken by a concurrent pop meanwhile is passed over for the next, so
        each item is returned once; the whole claim ends within the store's deadline.
        Once the caller is gone (`handover`), no delete is sent, and an item deleted
        meanwhile is put back."""
        deadline = Deadline.after(self._store.timeout)
        for hits in self._history.newest_first(window=_POP_WINDOW, source=_EVENT_SOURCE):
            for hit in hits:
                item = stored_item(hit["_source"])
                if item is None:  # an event of another surface that is no item: left alone
                    if handover.abandoned.is_set():
                        return None
                    continue
                taken = claim(
                    self._store.client, hit, routing=self.user_id, deadline=deadline,
                    stop=handover.abandoned, what=f"session {self.session_id!r}",
                    timeout=self._store.timeout,
                )  # fmt: skip
                if taken:
                    # Gone for reads: now from the contexts of the turns after it too.
                    self._store.forget(self.user_id, [hit["_id"]])
                    popped = _Popped(item, hit["_source"])
                    if handover.hand_over(popped):
                        return item  # type: ignore[return-value]  # a JSON object
                    self._put_back(popped)
                    return None
                if handover.abandoned.is_set():
                    return None
            # All taken meanwhile, or none an item: look further back.
        return None
