"""The arguments a model sends to each tool, as pydantic models.

These models are the one source of the tool definitions: the JSON Schema a framework
hands to the model is generated from them, and the same models validate what comes
back. None of them has a field that names a user, a session, a contact, an inbox or
an index: the scope is bound by the application, never by the model.
"""

from collections.abc import Callable
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from session_recall.recall import (
    DEFAULT_CONTEXT,
    DEFAULT_LIMIT,
    MAX_CONTEXT,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    MatchMode,
)

INNER_THOUGHT = "Deep inner monologue private to you only."
PAGE = "Page of results to retrieve (0-indexed). Omit or use 0 for the first page."
MATCH_MODE = "'any' (default) or 'all': how multiple comma-separated keywords in 'query' combine."
SINCE = (
    "ISO-8601 instant (e.g. '2026-07-01T00:00:00Z'); only events at or after this time are "
    "considered. Omit to search the full history."
)
TERMS = (
    "Case-insensitive keyword or phrase to search for. Supply multiple, comma-separated "
    "keywords to search for more than one term at once (up to 20 terms per call)."
)


def _first_page_below_zero(value: object) -> object:
    """null and a negative page are the first page, as the reference tools' contract
    says ("negative values are clamped to 0"): a model that counts back is shown page 0.
    A page that is no integer (`"1"`, `true`) stays the model's mistake to name."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return 0
    return value


def _none_to(default: int) -> Callable[[object], object]:
    """null means the default, as models often send it for an optional argument."""
    return lambda value: default if value is None else value


def _blank_to_none(value: object) -> object:
    return None if isinstance(value, str) and not value.strip() else value


def _lower(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


# null and a negative page mean the first page; the schema has no `minimum`, so a
# framework that checks arguments against it passes them on to be clamped.
Page = Annotated[int, BeforeValidator(_first_page_below_zero), Field(description=PAGE)]
# recall's MatchMode, as a model may spell it ("ANY", " all ").
MatchModeArgument = Annotated[MatchMode, BeforeValidator(_lower), Field(description=MATCH_MODE)]


class ToolArguments(BaseModel):
    """Unknown arguments are refused (`extra="forbid"`), so none can widen the scope."""

    # Strict: `"page": "1"` or `"limit": true` is a mistake to name, not a value to
    # guess at.
    model_config = ConfigDict(extra="forbid", populate_by_name=False, frozen=True, strict=True)

    # Required, as in the reference, and never echoed: excluded from dumps and reprs.
    inner_thought: str = Field(
        alias="innerThought", description=INNER_THOUGHT, repr=False, exclude=True
    )


class CrossSessionSearchArguments(ToolArguments):
    query: str = Field(description=TERMS)
    match_mode: MatchModeArgument = Field(default="any", alias="matchMode")
    since: Annotated[str | None, BeforeValidator(_blank_to_none)] = Field(
        default=None, description=SINCE
    )
    page: Page = 0


class ConversationSearchArguments(ToolArguments):
    query: str = Field(description="Keyword to search for in the conversation history.")
    page: Page = 0


class CrossConversationSearchArguments(ToolArguments):
    query: str = Field(description=TERMS)
    match_mode: MatchModeArgument = Field(default="any", alias="matchMode")
    page: Page = 0


class MemorySearchArguments(ToolArguments):
    query: str = Field(
        description="What to recall, in a sentence: a question, or the user's message as it "
        f"is (up to {MAX_QUERY_CHARS:,} characters). Events are found by meaning as well as "
        "by words, so it need not repeat their wording."
    )
    since: Annotated[str | None, BeforeValidator(_blank_to_none)] = Field(
        default=None, description=SINCE
    )
    until: Annotated[str | None, BeforeValidator(_blank_to_none)] = Field(
        default=None,
        description="ISO-8601 instant; only events at or before this time are considered.",
    )
    types: list[str] | None = Field(
        default=None,
        description="Only events of these types (e.g. ['user_message', 'assistant_message']). "
        "Omit for all types.",
    )
    limit: Annotated[int, BeforeValidator(_none_to(DEFAULT_LIMIT))] = Field(
        default=DEFAULT_LIMIT,
        ge=1,
        le=MAX_LIMIT,
        description=f"How many events to return, most relevant first (1 to {MAX_LIMIT}).",
    )
    context: Annotated[int, BeforeValidator(_none_to(DEFAULT_CONTEXT))] = Field(
        default=DEFAULT_CONTEXT,
        ge=0,
        le=MAX_CONTEXT,
        description="How many events of the same session to show before and after each "
        f"one found (0 to {MAX_CONTEXT}).",
    )
