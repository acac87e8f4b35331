"""Validation of memory_search's arguments, before any request is sent.

The query is a sentence or a whole message, not a list of terms: agent frameworks
pass the user's message as it is (ADK's `preload_memory` does).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from session_recall.core.instant import Instant
from session_recall.recall.arguments import has_word, no_word, parse_instant
from session_recall.recall.errors import (
    InvalidLimit,
    InvalidSearchMode,
    InvalidSince,
    InvalidTypes,
    InvalidUntil,
    QueryTooLong,
)

SearchMode = Literal["keyword", "semantic", "hybrid"]
SEARCH_MODES: tuple[SearchMode, ...] = ("keyword", "semantic", "hybrid")

# A user's message, even a long one, fits; a pasted document does not, and every one
# of its words would become a clause of the keyword query.
MAX_QUERY_CHARS = 1000
# A model reads every hit with its neighbours: ten is a screenful, fifty is plenty.
DEFAULT_LIMIT = 10
MAX_LIMIT = 50
# One event before and after is usually the question and its answer.
DEFAULT_CONTEXT = 1
MAX_CONTEXT = 10
# Event types are a small vocabulary (user_message, tool_call, ...).
MAX_TYPES = 20
_MAX_TYPE_CHARS = 512


def parse_query(query: str) -> str:
    if not isinstance(query, str):
        raise no_word("")
    if not has_word(query):
        raise no_word(query)
    text = query.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise QueryTooLong(
            f"The query is {len(text)} characters long; the limit is {MAX_QUERY_CHARS}.",
            hint="Ask about one thing, in a sentence or two.",
        )
    return text


def parse_bounds(
    since: str | Instant | None, until: str | Instant | None
) -> tuple[Instant | None, Instant | None]:
    start = parse_instant("since", since, InvalidSince)
    end = parse_instant("until", until, InvalidUntil)
    if start is not None and end is not None and end < start:
        raise InvalidUntil(f"until={end} is before since={start}.", hint="Swap them, or drop one.")
    return start, end


def parse_count(name: str, value: object, *, low: int, high: int) -> int:
    """`limit` and `context`: whole numbers within their bounds (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidLimit(
            f"{name}={value!r} is out of range.", hint=f"Use a whole number from {low} to {high}."
        )
    return value


def parse_types(types: Sequence[str] | None) -> tuple[str, ...]:
    if types is None:
        return ()
    if isinstance(types, str) or len(types) > MAX_TYPES:
        raise InvalidTypes(
            f"types must be a list of at most {MAX_TYPES} event types.",
            hint="Pass e.g. ['user_message', 'assistant_message'], or omit it for all.",
        )
    cleaned = []
    for kind in types:
        if not isinstance(kind, str) or not kind.strip() or len(kind) > _MAX_TYPE_CHARS:
            raise InvalidTypes(
                f"{kind!r} is not an event type.",
                hint="Pass names such as 'user_message' or 'tool_call'.",
            )
        cleaned.append(kind.strip())
    return tuple(dict.fromkeys(cleaned))


def parse_mode(mode: str) -> SearchMode:
    wanted = mode.strip().lower() if isinstance(mode, str) else mode
    for known in SEARCH_MODES:
        if wanted == known:
            return known
    raise InvalidSearchMode(
        f"mode={mode!r} is not a search mode.",
        hint="Use 'keyword', 'semantic' or 'hybrid'.",
    )


@dataclass(frozen=True)
class MemoryRequest:
    """memory_search's arguments, checked. `mode` is None when the searcher's default
    applies."""

    text: str
    mode: SearchMode | None
    since: Instant | None
    until: Instant | None
    types: tuple[str, ...]
    limit: int
    context: int

    @classmethod
    def parse(
        cls,
        query: str,
        *,
        mode: str | None = None,
        since: str | Instant | None = None,
        until: str | Instant | None = None,
        types: Sequence[str] | None = None,
        limit: int = DEFAULT_LIMIT,
        context: int = DEFAULT_CONTEXT,
    ) -> "MemoryRequest":
        """Raises the recall errors of a bad argument; needs no node, so an adapter may
        call it before it connects."""
        text = parse_query(query)
        start, end = parse_bounds(since, until)
        return cls(
            text=text,
            mode=None if mode is None else parse_mode(mode),
            since=start,
            until=end,
            types=parse_types(types),
            limit=parse_count("limit", limit, low=1, high=MAX_LIMIT),
            context=parse_count("context", context, low=0, high=MAX_CONTEXT),
        )
