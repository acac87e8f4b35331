"""Validation of what a caller (often a model) passes to a search: the query, the match
mode, `since` and the page number. Everything here runs before any request, so a bad
argument is a clear error rather than an engine error or, worse, a silent "no filter".
"""

import unicodedata
from typing import Literal

from session_recall.core.instant import Instant, InvalidInstant
from session_recall.recall.errors import (
    EmptyQuery,
    InvalidMatchMode,
    InvalidPage,
    InvalidSince,
    RecallError,
    TermTooLong,
    TooManyTerms,
)

MatchMode = Literal["any", "all"]

# The reference tool's limit. Each term is one match_phrase clause, so this also keeps a
# request far below Elasticsearch's bool clause limit.
MAX_TERMS = 20
# A keyword or phrase worth recalling fits in a sentence. The bound keeps a pasted
# document out of the phrase query, where every token becomes a position to check.
MAX_TERM_LENGTH = 256


def has_word(text: str) -> bool:
    """Whether `text` holds something a search can match: a letter or a digit (in any
    script), or a symbol such as an emoji, which the standard analyzer keeps as a word.
    Punctuation, commas and spaces alone are no word: the analyzers drop them, so a
    keyword search would find nothing, and the query's vector would find events unrelated
    to anything asked."""
    return any(char.isalnum() or unicodedata.category(char) == "So" for char in text)


def no_word(query: str) -> EmptyQuery:
    """The one refusal of a query without a word, whatever the search: every mode of
    every tool, on every surface, says the same."""
    if not query.strip():
        return EmptyQuery(
            "The query is empty.", hint="Ask in a sentence what to recall, or give keywords."
        )
    return EmptyQuery(
        f"The query {query[:40]!r} has no word to search for, only punctuation, commas or spaces.",
        hint="Ask in a sentence what to recall, or give keywords.",
    )


def parse_terms(query: str) -> tuple[str, ...]:
    """Split on commas, trim each term and drop the empty ones; at least one must hold
    a word (`has_word`)."""
    terms = tuple(term for term in (part.strip() for part in query.split(",")) if term)
    if not any(has_word(term) for term in terms):
        raise no_word(query)
    if len(terms) > MAX_TERMS:
        raise TooManyTerms(
            f"The query has {len(terms)} terms; at most {MAX_TERMS} are allowed.",
            hint="Drop some terms, or split them over several searches.",
        )
    return tuple(_checked_length(term) for term in terms)


def parse_phrase(query: str) -> str:
    """One keyword or phrase, taken whole (commas included) and trimmed."""
    phrase = query.strip()
    if not has_word(phrase):
        raise no_word(query)
    return _checked_length(phrase)


def parse_match(match: str) -> MatchMode:
    mode = match.strip().lower() if isinstance(match, str) else match
    if mode == "any":
        return "any"
    if mode == "all":
        return "all"
    raise InvalidMatchMode(
        f"match={match!r} is not a match mode.",
        hint="Use 'any' (at least one term) or 'all' (every term).",
    )


def parse_since(since: str | Instant | None) -> Instant | None:
    return parse_instant("since", since, InvalidSince)


def parse_instant(
    name: str, value: str | Instant | None, error: type[RecallError]
) -> Instant | None:
    """An optional instant argument; `error` names which one was wrong."""
    if value is None or isinstance(value, Instant):
        return value
    try:
        return Instant.parse(value)
    except InvalidInstant as err:
        # The instant's own reason: a bad format, an impossible date, or out of range.
        raise error(
            f"{name}: {err}", hint=f"Leave {name} out to search the full history."
        ) from None


def checked_page(page: int) -> int:
    """Pages are zero-indexed; a negative one is refused rather than read as the first
    (a caller that counts backwards would be shown page 0 as if it were theirs)."""
    if isinstance(page, bool) or not isinstance(page, int) or page < 0:
        raise InvalidPage(
            f"page: {page!r} is not a page number.",
            hint="Pages count from 0, the first; leave it out for the first page.",
        )
    return page


def _checked_length(term: str) -> str:
    if len(term) > MAX_TERM_LENGTH:
        raise TermTooLong(
            f"A term is {len(term)} characters long; the limit is {MAX_TERM_LENGTH}.",
            hint="Search for a shorter keyword or phrase from it.",
        )
    return term
