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


# Each accepted key (snake_case and camelCase) to its field; timestamp, type, text
# and metadata are spelled the same both ways.
_KEYS = {
    key: name for name, field in Event.model_fields.items() for key in (name, field.alias or name)
}
# Every field in declaration order, the required ones too (always given when used).
_DEFAULTS = {name: field.default for name, field in Event.model_fields.items()}
_NAMES = frozenset(Event.model_fields)
_ALIASES = frozenset(field.alias or name for name, field in Event.model_fields.items())
_NULLABLE = frozenset({"contact_id", "inbox_id"})
_new_event = object.__new__
_set = object.__setattr__
_IDENTIFIERS = ("user_id", "session_id", "type")
_OPTIONAL_IDENTIFIERS = ("event_id", "contact_id", "inbox_id", "conversation_type")


def event_if_plain(value: dict[str, Any], max_text_bytes: int) -> Event | None:
    """The `Event` that validating `value` gives, built without pydantic's validation,
    when `value` is plainly valid: each field given once, by one of its names, with a
    value of its exact type within its bounds. None otherwise (an error, or a case this
    shortcut does not decide, such as a `datetime` timestamp): then validate as usual,
    which explains what is wrong. Validation cost most of an ingest's CPU; this is
    the same result for a fraction of it (a property test holds the two equal).
    """
    keys = value.keys()
    if keys <= _NAMES:
        fields = value
    elif keys <= _ALIASES:
        fields = {_KEYS[key]: item for key, item in value.items()}
    else:  # both spellings mixed, or an unknown key
        fields = {}
        for key, item in value.items():
            name = _KEYS.get(key)
            if name is None or name in fields:
                return None
            fields[name] = item
    for name in _IDENTIFIERS:
        item = fields.get(name)
        if type(item) is not str or not item.strip() or len(item) > MAX_ID_CHARS:
            return None
    for name in _OPTIONAL_IDENTIFIERS:
        item = fields.get(name)
        if item is None:
            if name in fields and name not in _NULLABLE:
                return None
        elif type(item) is not str or not item.strip() or len(item) > MAX_ID_CHARS:
            return None
    text = fields.get("text")
    if type(text) is not str or (
        len(text) * 4 > max_text_bytes
        and len(text.encode("utf-8", "surrogatepass")) > max_text_bytes
    ):
        return None
    metadata = fields.get("metadata")
    if metadata is not None and (
        type(metadata) is not dict or not all(type(k) is str for k in metadata)
    ):
        return None
    stamp = fields.get("timestamp")
    if type(stamp) is not str:
        return None
    try:
        instant = Instant.parse(stamp)
    except ValueError:
        return None
    # What `model_construct` does, without its per-field alias lookups: every field in
    # declaration order, defaults filled in, the given ones recorded as set.
    event = _new_event(Event)
    attributes = {**_DEFAULTS, **fields, "timestamp": instant}
    if metadata is not None:
        attributes["metadata"] = dict(metadata)  # validation copies it too
    _set(event, "__dict__", attributes)
    _set(event, "__pydantic_fields_set__", set(fields))
    _set(event, "__pydantic_extra__", None)
    _set(event, "__pydantic_private__", None)
    if "event_id" not in fields:
        _set(event, "event_id", derived_event_id(event))
    return event


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
