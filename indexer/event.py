"""The event model: what a producer sends, checked before it costs a bulk slot.

Java producers emit camelCase (`userId`), Python ones snake_case (`user_id`); both
validate to the same `Event`, so both give the same document and the same id.
"""

from typing import Annotated, Any, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from session_recall.core.digest import digest
from session_recall.core.instant import Instant
from session_recall.core.limits import MAX_ID_CHARS

# One event is one message, not a document store: larger texts are a producer bug.
DEFAULT_MAX_TEXT_BYTES = 1_000_000
CONTEXT_MAX_TEXT_BYTES = "max_text_bytes"


def _identifier(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    if len(value) > MAX_ID_CHARS:
        raise ValueError(f"is {len(value)} characters long; the limit is {MAX_ID_CHARS}")
    return value


Identifier = Annotated[str, AfterValidator(_identifier)]


class Event(BaseModel):
    """One session event. Unknown fields are refused, so a typo is not silently lost."""

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, alias_generator=to_camel, frozen=True
    )

    event_id: Identifier = Field(
        default="",
        description="Producer's id, unique per user. When absent it is derived from the "
        "content, so replaying the same event never stores it twice.",
    )
    user_id: Identifier
    session_id: Identifier
    timestamp: Instant = Field(description="ISO-8601 with Z or an offset; nanoseconds kept.")
    type: Identifier = Field(description="user_message, assistant_message, tool_call, ...")
    text: str
    contact_id: Identifier | None = None
    inbox_id: Identifier | None = None
    conversation_type: Identifier = "chat"
    metadata: dict[str, Any] | None = Field(default=None, description="Stored, not indexed.")

    @field_validator("text")
    @classmethod
    def _text_fits(cls, value: str, info: ValidationInfo) -> str:
        limit = (info.context or {}).get(CONTEXT_MAX_TEXT_BYTES, DEFAULT_MAX_TEXT_BYTES)
        # A character is at most 4 bytes in UTF-8: skip encoding short texts.
        if len(value) * 4 > limit and len(value.encode("utf-8", "surrogatepass")) > limit:
            raise ValueError(f"is over the {limit}-byte limit")
        return value

    @model_validator(mode="after")
    def _derive_event_id(self) -> Self:
        if not self.event_id:
            # The model is frozen for callers; this is its own construction step.
            object.__setattr__(self, "event_id", derived_event_id(self))
        return self


def derived_event_id(event: Event) -> str:
    """The id of an event that came without one: a digest of every content field.

    `metadata` is left out on purpose: producers often fill it with delivery details
    (attempt counts, latencies) that differ between a send and its retry.
    """
    return digest(
        [
            event.user_id,
            event.session_id,
            event.timestamp.nanos,
            event.type,
            event.text,
            event.contact_id,
            event.inbox_id,
            event.conversation_type,
        ]
    )
