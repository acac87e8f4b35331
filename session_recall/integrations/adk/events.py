"""ADK's events and memories as ours, and our hits as ADK's `MemoryEntry`s.

An ADK `Event` becomes one event of ours: its `id` is the event id, its `timestamp`
(float seconds) the instant, to the microsecond (`adk_instant`), its text parts the
text. A function call or response without text is a `tool_call` or `tool_result`, its
name and JSON arguments (or response) as text. An event with nothing of these is
skipped, as ADK's own services skip events without content. What ADK needs back
(author, role, custom metadata) is stored in the event's metadata, which is kept but
never indexed.
"""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
from google.adk.events.event import Event as AdkEvent
from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from session_recall.core.digest import digest
from session_recall.core.instant import Instant, InvalidInstant
from session_recall.indexer import Event
from session_recall.recall import MemoryHit, RecallItem

KEY = "adk"  # where the event's metadata keeps ADK's fields
MEMORIES_SESSION = "adk-memories"  # the session of memories added with `add_memory`


def _json(value: Any) -> str:
    return orjson.dumps(value, default=str, option=orjson.OPT_SORT_KEYS).decode()


def _plain(value: Mapping[str, object] | None) -> dict[str, Any]:
    """`value` as JSON holds it: what Elasticsearch can store, whatever it held."""
    return dict(orjson.loads(_json(dict(value)))) if value else {}


def adk_instant(timestamp: float) -> Instant:
    """The instant of an ADK event's `timestamp`, to the microsecond, rounded as
    `datetime.fromtimestamp` rounds it.

    ADK's session stores (`DatabaseSessionService` on its legacy schema, Vertex) keep
    an event's time as a `datetime`, so a session read back holds each timestamp
    rounded to the microsecond: an instant with the float's nanoseconds would differ
    from the one stored before the reload, and the same event would be stored again
    (its document is its user, id and instant). The microsecond survives that round
    trip, as a property test holds with ADK's own conversions. Events of one session
    keep their order; two that are 2 µs apart or more never share an instant, and
    closer ones that do are ordered by event id."""
    try:
        return Instant.from_datetime(datetime.fromtimestamp(timestamp, UTC))
    except (OverflowError, OSError, ValueError):
        raise InvalidInstant(
            f"The ADK event timestamp {timestamp!r} is not an instant between 1970 and 2262."
        ) from None


def _text_and_type(parts: Sequence[types.Part], author: str | None) -> tuple[str, str] | None:
    texts = [part.text for part in parts if part.text]
    if texts:
        return " ".join(texts), "user_message" if author == "user" else "assistant_message"
    calls = [part.function_call for part in parts if part.function_call]
    if calls:
        return "; ".join(f"{c.name}({_json(c.args or {})})" for c in calls), "tool_call"
    answers = [part.function_response for part in parts if part.function_response]
    if answers:
        return "; ".join(f"{a.name}: {_json(a.response or {})}" for a in answers), "tool_result"
    return None


def from_adk_event(
    event: AdkEvent,
    *,
    user_id: str,
    session_id: str,
    custom_metadata: Mapping[str, object] | None = None,
) -> Event | None:
    """Ours, or None for an event without text, call or response."""
    content = event.content
    if content is None or not content.parts:
        return None
    found = _text_and_type(content.parts, event.author)
    if found is None:
        return None
    text, kind = found
    fields: dict[str, Any] = {"author": event.author, "role": content.role}
    if custom_metadata:
        fields["custom_metadata"] = _plain(custom_metadata)
    event_fields: dict[str, Any] = {
        "user_id": user_id,
        "session_id": session_id,
        "timestamp": adk_instant(event.timestamp),
        "type": kind,
        "text": text,
        "metadata": {KEY: fields},
    }
    if event.id:
        event_fields["event_id"] = event.id
    return Event.model_validate(event_fields)


def untimed_id(memory: MemoryEntry) -> str:
    """The event id of a memory added without a timestamp: its own id or, without one,
    a digest of its author, role and text. Adding it again finds its stored copy by it
    (`EventStore.instants_of`), and takes that copy's instant: stored once."""
    if memory.id:
        return memory.id
    found = _text_and_type(memory.content.parts or [], memory.author)
    text = found[0] if found else ""
    return "adk-memory-" + digest([memory.author, memory.content.role, text])


def from_memory(
    memory: MemoryEntry,
    *,
    user_id: str,
    custom_metadata: Mapping[str, object] | None,
    at: Instant | None = None,
) -> Event | None:
    """A memory added with `add_memory`, as an event of the session `adk-memories`.

    A memory without a timestamp is stamped `at`: the instant its id already has
    (`untimed_id`), or now for one never added. So adding it again stores nothing
    twice, and one erased by id (`delete_memory(memory_id=...)`) stays out; one
    erased with its whole scope is a new memory when added again."""
    found = _text_and_type(memory.content.parts or [], memory.author)
    if found is None:
        return None
    text, _ = found
    fields: dict[str, Any] = {"author": memory.author, "role": memory.content.role}
    extra = {**_plain(memory.custom_metadata), **_plain(custom_metadata)}
    if extra:
        fields["custom_metadata"] = extra
    event_fields: dict[str, Any] = {
        "user_id": user_id,
        "session_id": MEMORIES_SESSION,
        "type": "memory",
        "text": text,
        "metadata": {KEY: fields},
    }
    if memory.timestamp:
        event_fields["timestamp"] = Instant.parse(memory.timestamp)
        if memory.id:
            event_fields["event_id"] = memory.id
    else:
        event_fields["timestamp"] = at or Instant.now()
        event_fields["event_id"] = untimed_id(memory)
    return Event.model_validate(event_fields)


def _turn(item: RecallItem) -> dict[str, Any]:
    return {"timestamp": item.timestamp.isoformat(), "type": item.type, "text": item.text}


def to_memory_entry(hit: MemoryHit) -> MemoryEntry:
    """A hit as ADK's entry: its content, author, ISO-8601 timestamp and id, and in
    `custom_metadata` (ADK's entry has no field for them) its session, type, score and
    neighbouring turns, over what the caller stored with it."""
    item = hit.event
    stored: dict[str, Any] = (item.metadata or {}).get(KEY, {})
    role = stored.get("role") or ("user" if item.type == "user_message" else "model")
    metadata = {
        **stored.get("custom_metadata", {}),
        "session_id": item.session_id,
        "event_type": item.type,
        "score": hit.score.fused,
        "before": [_turn(turn) for turn in hit.before],
        "after": [_turn(turn) for turn in hit.after],
    }
    return MemoryEntry(
        id=item.event_id,
        content=types.Content(role=role, parts=[types.Part(text=item.text)]),
        author=stored.get("author"),
        timestamp=item.timestamp.isoformat(),
        custom_metadata=metadata,
    )
