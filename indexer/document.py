"""How an event becomes an Elasticsearch document: its `_id`, its routing, its body.

`_id` is a digest of `[user_id, event_id, instant]` (`Identity`): producers only promise
event ids unique per user, and two users' events may share a shard, so the user is part
of the key. The digest also keeps `_id` within Elasticsearch's 512-byte limit whatever
the ids are.
"""

import functools
from dataclasses import dataclass
from typing import Any, Literal, get_args

import orjson

from session_recall.core.digest import digest
from session_recall.core.instant import Instant
from session_recall.core.words import searchable_words
from session_recall.indexer.event import Event
from session_recall.indexer.scope import scope_id

# What makes two events one, and so one document (docs/concepts.md, "stored once"): on an
# alias set up since this rule, the user, the event id and the instant, so an id that
# a producer reuses at another time is another event wherever its partition is (the
# id alone would make it one event within a partition and two across partitions). An
# alias set up before keeps the user and the event id, so that replays of the events
# it holds meet their stored copies. `setup` records the rule in the index template.
Identity = Literal["user-event-time", "user-event"]
IDENTITIES: tuple[Identity, ...] = get_args(Identity)
DEFAULT_IDENTITY: Identity = "user-event-time"
LEGACY_IDENTITY: Identity = "user-event"


def document_id(
    *, user_id: str, event_id: str, timestamp: Instant | None, identity: Identity
) -> str:
    """The document `_id` of an event: a digest of what the alias's `identity` names."""
    # `to_document` makes the same digest inline: a call less for every event.
    if identity == LEGACY_IDENTITY:
        return digest([user_id, event_id])
    assert timestamp is not None, "this identity takes the instant"
    return digest([user_id, event_id, timestamp.nanos])


# A number from the event's user and session, the same for every event of a session:
# enrichers split the work by it (`enrichment.slices`), so that the turns of one session,
# whose contexts hold each other, are always enriched by one of them.
SLOT_FIELD = "slot"
SLOTS = 1 << 16


def session_slot(user_id: str, session_id: str) -> int:
    """The session's slot: the first 16 bits of its scope id (a digest), 0 to 65535."""
    return int(scope_id("session", user_id, session_id)[:4], 16)


def document_body(event: Event) -> dict[str, Any]:
    """The stored fields. `timestamp` is fixed-width so `date_nanos` keeps every digit."""
    body: dict[str, Any] = {
        "event_id": event.event_id,
        "user_id": event.user_id,
        "session_id": event.session_id,
        "timestamp": event.timestamp.to_elasticsearch(),
        "type": event.type,
        "text": event.text,
        "conversation_type": event.conversation_type,
        SLOT_FIELD: session_slot(event.user_id, event.session_id),
    }
    words = searchable_words(event.text)
    if words is not None:  # not plain ASCII (`core.words`); the native core declines it
        body["words"] = words
    if event.contact_id is not None:
        body["contact_id"] = event.contact_id
    if event.inbox_id is not None:
        body["inbox_id"] = event.inbox_id
    if event.metadata is not None:
        body["metadata"] = event.metadata
    if event.truncated is not None:
        body["truncated"] = event.truncated
    if event.payload is not None:
        body["payload"] = event.payload
    return body


# Not frozen: one is made per event, and a frozen dataclass costs three times as much
# to build (see `lines.Line`). Nothing changes one once made: `extended` makes another.
@dataclass(slots=True)
class Document:
    """A create action, serialized once: `size` bounds the chunk it joins, and the
    bulk body is joined from `header_json` and `body` as they are."""

    index: str
    id: str
    routing: str
    body: bytes
    size: int
    header_json: bytes

    @property
    def header(self) -> dict[str, Any]:
        """The create action's header, as `header_json` holds it."""
        return {"create": {"_index": self.index, "_id": self.id, "routing": self.routing}}

    def extended(self, fields: dict[str, Any]) -> "Document":
        """The same create action with `fields` added to the body (vectors, say).

        The serialized body is extended in place of being serialized again: it ends
        with the object's closing brace, and a document always has fields before it.
        """
        extra = orjson.dumps(fields, option=orjson.OPT_SERIALIZE_NUMPY)
        if extra == b"{}":
            return self
        body = self.body[:-1] + b"," + extra[1:]
        return Document(
            self.index,
            self.id,
            self.routing,
            body,
            self.size + len(body) - len(self.body),
            self.header_json,
        )


def to_document(event: Event, *, index: str, identity: Identity = DEFAULT_IDENTITY) -> Document:
    """Raises `TypeError` for metadata orjson cannot encode."""
    routing = event.user_id
    doc_id = digest(  # = document_id(...)
        [routing, event.event_id]
        if identity == LEGACY_IDENTITY
        else [routing, event.event_id, event.timestamp.nanos]
    )
    header_json = _header_start(index, routing) + doc_id.encode() + b'"}}'
    body = orjson.dumps(document_body(event))
    # Header line and body line, each followed by a newline in the bulk request.
    size = len(header_json) + len(body) + 2
    return Document(index, doc_id, routing, body, size, header_json)


@functools.lru_cache(maxsize=4096)
def _header_start(index: str, routing: str) -> bytes:
    """The create header up to its id, which is hex: a chunk's events share a few
    (partition, user) pairs, and the serialized start is reused."""
    start = orjson.dumps({"create": {"_index": index, "routing": routing, "_id": ""}})
    return start[: -len(b'"}}')]


# What JSON readers keep exact: orjson's, the client's and Elasticsearch's read an
# integer beyond these as the nearest float.
_INTEGERS = range(-(2**63), 2**64)


def unstorable(event: Event) -> str:
    """Why `to_document` could not serialize `event` (it raised `TypeError`): the field
    and the place in it that JSON cannot hold, and what to send instead."""
    for field in ("payload", "metadata"):
        value = getattr(event, field)
        try:
            orjson.dumps(value)
        except TypeError:
            return _first_unstorable(value, field)
    return "the event cannot be stored as JSON"


def _first_unstorable(value: Any, where: str) -> str:
    """Depth first: the first value under `value` (at `where`) that orjson refuses."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    return f"{path} has the key {key!r}, which is not a string; JSON keys are"
            stack.extend((item[key], f"{path}.{key}") for key in reversed(list(item)))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{path}[{i}]") for i, child in reversed(list(enumerate(item))))
        elif isinstance(item, int) and not isinstance(item, bool) and item not in _INTEGERS:
            return (
                f"{path} holds the integer {item}, beyond 64 bits, which no JSON reader on "
                f"the way keeps exact (it would come back as {float(item)!r}); send it as "
                "a string"
            )
        else:
            try:
                orjson.dumps(item)
            except TypeError as err:
                return f"{path} cannot be stored as JSON: {err}"
    return f"{where} cannot be stored as JSON"
