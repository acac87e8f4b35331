"""A scope of events that can be erased: a user, one session of a user, a contact in
one inbox of a user, or one event of a user. Its id names it in the tombstone index.

Every scope names its user: contact and inbox ids repeat across users (tenants), so
erasing one tenant's contact must leave another tenant's contact of the same id alone.
"""

import functools
from collections.abc import Iterable
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, model_validator

from session_recall.core.digest import digest
from session_recall.core.user_filter import user_filter
from session_recall.indexer.event import Event, Identifier

Kind = Literal["user", "session", "contact", "event"]


class Scope(BaseModel):
    """Build with `Scope.user(...)`, `Scope.session(...)`, `Scope.contact(...)` or
    `Scope.event(...)`."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    user_id: Identifier | None = None
    session_id: Identifier | None = None
    contact_id: Identifier | None = None
    inbox_id: Identifier | None = None
    event_id: Identifier | None = None

    @classmethod
    def user(cls, user_id: str) -> "Scope":
        return cls(kind="user", user_id=user_id)

    @classmethod
    def session(cls, user_id: str, session_id: str) -> "Scope":
        return cls(kind="session", user_id=user_id, session_id=session_id)

    @classmethod
    def contact(cls, user_id: str, contact_id: str, inbox_id: str) -> "Scope":
        return cls(kind="contact", user_id=user_id, contact_id=contact_id, inbox_id=inbox_id)

    @classmethod
    def event(cls, user_id: str, event_id: str) -> "Scope":
        """One event of a user (every copy of its id: stamped at any instant)."""
        return cls(kind="event", user_id=user_id, event_id=event_id)

    @property
    def id(self) -> str:
        return scope_id(self.kind, *self._key())

    @property
    def routing(self) -> str | None:
        """A user's events live on one shard: every scope is searched there alone."""
        return self.user_id

    def query(self) -> dict[str, Any]:
        assert self.user_id is not None  # every scope names its user (`_complete`)
        terms = user_filter(
            self.user_id,
            session_id=self.session_id,
            contact_id=self.contact_id,
            inbox_id=self.inbox_id,
            event_id=self.event_id,
        )
        return {"bool": {"filter": terms}}

    def describe(self) -> str:
        if self.kind == "user":
            return f"user {self.user_id!r}"
        if self.kind == "session":
            return f"session {self.session_id!r} of user {self.user_id!r}"
        if self.kind == "event":
            return f"event {self.event_id!r} of user {self.user_id!r}"
        return f"contact {self.contact_id!r} in inbox {self.inbox_id!r} of user {self.user_id!r}"

    def _key(self) -> tuple[str | None, ...]:
        if self.kind == "user":
            return (self.user_id,)
        if self.kind == "session":
            return (self.user_id, self.session_id)
        if self.kind == "event":
            return (self.user_id, self.event_id)
        return (self.user_id, self.contact_id, self.inbox_id)

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if None in self._key():
            names = {
                "user": "user_id",
                "session": "user_id and session_id",
                "event": "user_id and event_id",
            }
            needed = names.get(self.kind, "user_id, contact_id and inbox_id")
            raise ValueError(f"a {self.kind} scope needs {needed}")
        return self


# An event's own scope id starts with this, so that a writer can tell those apart:
# it asks for them only where an event was erased on its own. The tombstone
# `ANY_EVENT_ERASED` records that one was, anywhere behind the alias; a user's marker
# (`events_marker`) that one of that user's was; `ALL_MARKED` that every such tombstone
# has its user's marker (tombstones of a release that wrote none lack them, and then
# every event's own scope is asked for). Every scope's id is a bare digest (hex), or
# starts with the prefix: never one of the markers' ids.
EVENT_PREFIX = "ev-"
ANY_EVENT_ERASED = EVENT_PREFIX + "any"
_MARKER_PREFIX = "events-of-"
ALL_MARKED = _MARKER_PREFIX + "all-marked"


def events_marker(user_scope_id: str) -> str:
    """The id of the marker that some event of the user of `user_scope_id` (a user
    scope's id) was erased on its own."""
    return _MARKER_PREFIX + user_scope_id


@functools.lru_cache(maxsize=4096)
def scope_id(kind: Kind, *key: str | None) -> str:
    """Cached: a bulk chunk names the same few users and sessions again and again.
    (A pure function of its arguments; tombstones themselves are never cached.) The
    bound covers a chunk's scopes; a larger cache would only keep ids alive."""
    if kind == "event":
        return _event_scope_id(*key)
    return digest([kind, *key])


def _event_scope_id(user_id: str | None, event_id: str | None) -> str:
    """Not cached: a chunk names each event once."""
    return EVENT_PREFIX + digest(["event", user_id, event_id])


def shared_scopes(ids: Iterable[str]) -> frozenset[str]:
    """The ids of `ids` that are not one event's own scope."""
    return frozenset(i for i in ids if not i.startswith(EVENT_PREFIX))


def scope_ids_of(event: Event) -> tuple[str, ...]:
    """Every scope an event belongs to: erasing any of them erases the event (its own
    scope, the event's, among them)."""
    shared = _scope_ids(event.user_id, event.session_id, event.contact_id, event.inbox_id)
    return (*shared, _event_scope_id(event.user_id, event.event_id))


@functools.lru_cache(maxsize=4096)
def _scope_ids(
    user_id: str, session_id: str, contact_id: str | None, inbox_id: str | None
) -> tuple[str, ...]:
    """Cached as a whole, once per event: a chunk's events share a few sessions."""
    ids = [scope_id("user", user_id), scope_id("session", user_id, session_id)]
    if contact_id is not None and inbox_id is not None:
        ids.append(scope_id("contact", user_id, contact_id, inbox_id))
    return tuple(ids)
