"""What can go wrong in a recall search. Each message is short and names the next step,
because the reader is often a model that has to fix its own tool call; each `kind`
says whose move it is (the caller's, the operator's, or a retry's)."""

from session_recall.core.errors import ErrorKind, SessionRecallError


class RecallError(SessionRecallError):
    """A recall search could not run as asked."""

    kind = ErrorKind.CALLER


class InvalidQuery(RecallError):
    """The query is not a list of terms the engine will search for."""


class EmptyQuery(InvalidQuery):
    """Nothing is left of the query once split on commas and trimmed."""


class TooManyTerms(InvalidQuery):
    """The query has more comma-separated terms than one search takes."""


class TermTooLong(InvalidQuery):
    """One term is longer than any keyword or phrase worth searching for."""


class InvalidMatchMode(RecallError):
    """`match` is neither `any` nor `all`."""


class InvalidSince(RecallError):
    """`since` is not an ISO-8601 instant with a time and an offset, or falls outside
    the instants an event can carry."""


class InvalidCursor(RecallError):
    """The cursor was not issued by this engine, or was altered since."""


class CursorMismatch(InvalidCursor):
    """The cursor was issued for another scope or another query."""


class ConflictingPagination(RecallError):
    """Both a page number and a cursor were given."""


class InvalidScope(RecallError):
    """A searcher was built with a missing or unusable scope or setting (an empty or
    overlong id, say): whoever named the scope must name another."""


class IndexNotFound(RecallError):
    """The alias to search does not exist: not set up yet, or a wrong name.

    Unavailable, as a missing alias is on the write side: the search works once
    `setup` has run, and the caller (often a model) is not the one at fault."""

    kind = ErrorKind.UNAVAILABLE


class SearchRefused(RecallError):
    """Elasticsearch refused the search for a reason retrying will not fix (e.g. 403)."""

    kind = ErrorKind.OPERATOR


class QueryTooLong(InvalidQuery):
    """A natural-language query is longer than one search takes."""


class InvalidUntil(RecallError):
    """`until` is not an ISO-8601 instant with a time and an offset."""


class InvalidLimit(RecallError):
    """`limit` or `context` is not a whole number within its bounds."""


class InvalidTypes(RecallError):
    """`types` is not a short list of event types."""


class InvalidSearchMode(RecallError):
    """`mode` is none of keyword, semantic and hybrid."""


class InvalidPage(RecallError):
    """A page number below 0 (pages count from 0)."""
