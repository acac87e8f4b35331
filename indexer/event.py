"""The event model: what a producer sends, checked before it costs a bulk slot.

Java producers emit camelCase (`userId`), Python ones snake_case (`user_id`); both
validate to the same `Event`, so both give the same document and the same id.
"""

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    JsonValue,
)
from pydantic.alias_generators import to_camel
from pydantic_core import core_schema

from session_recall.core.digest import digest
from session_recall.core.instant import Instant
from session_recall.core.limits import MAX_ID_CHARS

# The kinds of an identifier's errors, for a renderer that words them (`parsing`).
ID_EMPTY, ID_TOO_LONG = "identifier_empty", "identifier_too_long"
# Every character `str.isspace` takes (a unit test holds them equal): an identifier of
# these alone is empty, as `str.strip` sees it.
WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_NOT_BLANK = "[^" + "".join(f"\\x{{{ord(c):x}}}" for c in WHITESPACE) + "]"


class _IdentifierChecks:
    """A non-empty id of at most MAX_ID_CHARS characters, checked by pydantic-core
    itself: a Python validator per id field cost a call each, four or five per event."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, _source: Any, _handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.chain_schema(
            [
                core_schema.str_schema(),
                core_schema.custom_error_schema(
                    core_schema.str_schema(pattern=_NOT_BLANK),
                    custom_error_type=ID_EMPTY,
                    custom_error_message="must not be empty",
                ),
                core_schema.custom_error_schema(
                    core_schema.str_schema(max_length=MAX_ID_CHARS),
                    custom_error_type=ID_TOO_LONG,
                    custom_error_message=f"is longer than the limit of {MAX_ID_CHARS} characters",
                ),
            ]
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, _schema: core_schema.CoreSchema, _handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        return {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}


Identifier = Annotated[str, _IdentifierChecks]


def _content_id(data: dict[str, Any]) -> str:
    """The id of an event that came without one (see `derived_event_id`), from its
    validated fields: `event_id` is declared last, so they are all there."""
    return digest(
        [
            data["user_id"],
            data["session_id"],
            data["timestamp"].nanos,
            data["type"],
            data["text"],
            data["contact_id"],
            data["inbox_id"],
            data["conversation_type"],
        ]
    )


class Event(BaseModel):
    """One session event. Unknown fields are refused, so a typo is not silently lost."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        alias_generator=to_camel,
        frozen=True,
        # NaN and Infinity are no JSON: stored, they would come back as null. JSON text
        # cannot hold them (the parsers refuse it); a value built in Python can.
        allow_inf_nan=False,
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
    truncated: int | None = Field(
        default=None,
        ge=0,
        description="Set by the service: the size in bytes of the text as it was sent, when "
        "that was over the text limit and the event's type is one whose text is cut (tool "
        "output: its head and tail are kept) rather than refused.",
    )
    payload: JsonValue = Field(
        default=None,
        description="Any JSON the producer wants back as it was (an agent framework's own "
        "item, say): stored and returned by the reads, never indexed or searched; `text` "
        "is what recall searches.",
    )
    # Last: its default is derived from every field above, once they are validated.
    event_id: Identifier = Field(
        default_factory=_content_id,
        description="Producer's id, unique per user. When absent it is derived from the "
        "content, so replaying the same event never stores it twice.",
    )


def derived_event_id(event: Event) -> str:
    """The id of an event that came without one: a digest of every content field.

    `metadata` is left out on purpose: producers often fill it with delivery details
    (attempt counts, latencies) that differ between a send and its retry; `payload`
    too, as the producer's own copy of what `text` says.
    """
    return _content_id(event.__dict__)
