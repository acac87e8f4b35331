"""What a search returns: a page of events in chronological order, and a cursor."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from session_recall.core.instant import Instant


class RecallItem(BaseModel):
    """One matching event. `timestamp` renders as Java's `Instant.toString` does."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    timestamp: Instant
    type: str | None = None
    text: str
    event_id: str
    # What the producer stored with the event (memory_search reads it; the others
    # do not): for a caller that maps events back to its own objects, never shown
    # in a tool's output or an answer.
    metadata: dict[str, Any] | None = Field(default=None, exclude=True)
    # What the producer stored to have back as it was (`Event.payload`), for the reads
    # and memory_search; left out of a JSON page when the event has none.
    payload: JsonValue = Field(default=None, exclude_if=lambda value: value is None)
    # Set when `text` is a cut of the event's text (a tool's answer is bounded, see
    # `session_recall.tools.bounds`): the whole text's length in characters. The reads
    # by event id give it whole.
    full_length: int | None = Field(default=None, exclude_if=lambda value: value is None)


class RecallPage(BaseModel):
    """Items oldest first; `next_cursor` is None on the last page.

    An empty `items` is the reference's "No results found.".
    """

    model_config = ConfigDict(frozen=True)

    items: list[RecallItem]
    next_cursor: str | None = None
