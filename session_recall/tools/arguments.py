"""The arguments a model sends to each tool, as pydantic models.

These models are the one source of the tool definitions: the JSON Schema a framework
hands to the model is generated from them, and the same models validate what comes
back. None of them has a field that names a user, a session, a contact, an inbox or
an index: the scope is bound by the application, never by the model.
"""

from collections.abc import Callable
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from session_recall.core.kept_memories import (
    MAX_REASON_CHARS,
    MAX_SOURCES,
    MAX_STATEMENT_CHARS,
    MAX_SUBJECT_CHARS,
    MemoryKind,
)
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


# recall_memories: a screenful of memories, and a few turns beneath them when asked;
# each memory is short (a statement of at most MAX_STATEMENT_CHARS), so the output
# stays within what memory_search's default answer holds.
DEFAULT_MEMORIES = 10
MAX_MEMORIES = 20
DEFAULT_TURNS = 5
MAX_TURNS = 10
# Kinds are a small vocabulary; each may be named once.
_MAX_KINDS = 5
KINDS = (
    "Only memories of these kinds: 'decision', 'correction', 'instruction' (an explicit "
    "'remember this'), 'preference', 'fact'. Omit for all kinds."
)
STATEMENT = (
    "What to remember, short and standalone (it is read without the conversation), e.g. "
    f"'The billing service uses MySQL.' Up to {MAX_STATEMENT_CHARS:,} characters."
)
SOURCES = (
    "The ids of the events (eventId) this memory comes from, as cross_session_search "
    f"returns them: at least one, at most {MAX_SOURCES}, each an event of this user."
)


class RecallMemoriesArguments(ToolArguments):
    query: str = Field(
        description="What to recall, in a sentence: a question, or the user's message as it "
        f"is (up to {MAX_QUERY_CHARS:,} characters)."
    )
    kinds: list[MemoryKind] | None = Field(default=None, max_length=_MAX_KINDS, description=KINDS)
    include_superseded: Annotated[bool, BeforeValidator(_none_to(False))] = Field(
        default=False,
        alias="includeSuperseded",
        description="Also return memories that a newer one replaced (history), each "
        "naming its successor in supersededBy. Omit for current memories only.",
    )
    limit: Annotated[int, BeforeValidator(_none_to(DEFAULT_MEMORIES))] = Field(
        default=DEFAULT_MEMORIES,
        ge=1,
        le=MAX_MEMORIES,
        description=f"How many memories to return, most relevant first (1 to {MAX_MEMORIES}).",
    )
    turns: Annotated[int, BeforeValidator(_none_to(0))] = Field(
        default=0,
        ge=0,
        le=MAX_TURNS,
        description="Also return up to this many of the user's past turns that match the "
        f"query, after the memories (0 to {MAX_TURNS}; 0, the default, returns none). Ask "
        "for them when the memories do not answer.",
    )


class SaveMemoryArguments(ToolArguments):
    statement: str = Field(min_length=1, max_length=MAX_STATEMENT_CHARS, description=STATEMENT)
    kind: MemoryKind = Field(
        description="'decision', 'correction', 'instruction' (the user asked to remember "
        "it), 'preference' or 'fact'."
    )
    sources: list[str] = Field(min_length=1, max_length=MAX_SOURCES, description=SOURCES)
    supersedes: Annotated[str | None, BeforeValidator(_blank_to_none)] = Field(
        default=None,
        description="The memoryId of a current memory that this one replaces (a correction, "
        "or a newer decision or preference); it is kept as history. Omit when none.",
    )
    subject: Annotated[str | None, BeforeValidator(_blank_to_none)] = Field(
        default=None,
        max_length=MAX_SUBJECT_CHARS,
        description="What it is about, in a few words (e.g. 'billing database'): a later "
        "memory on the same subject and kind supersedes this one. Optional.",
    )


class RetireMemoryArguments(ToolArguments):
    memory_id: str = Field(
        alias="memoryId", min_length=1, description="The memoryId of the memory to retire."
    )
    reason: str = Field(
        min_length=1,
        max_length=MAX_REASON_CHARS,
        description="Why it no longer holds, in a sentence (kept with the memory).",
    )
