"""What can go wrong in a recall search. Each message is short and names the next step,
because the reader is often a model that has to fix its own tool call."""

from session_recall.core.errors import SessionRecallError


class RecallError(SessionRecallError):
    """A recall search could not run as asked."""


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
    """`since` is not an ISO-8601 instant with a time and an offset."""


class InvalidCursor(RecallError):
    """The cursor was not issued by this engine, or was altered since."""


class CursorMismatch(InvalidCursor):
    """The cursor was issued for another scope or another query."""


class ConflictingPagination(RecallError):
    """Both a page number and a cursor were given."""


class InvalidScope(RecallError):
    """A searcher was built with a missing or unusable scope or setting."""


class IndexNotFound(RecallError):
    """The alias to search does not exist."""


class SearchRefused(RecallError):
    """Elasticsearch refused the search for a reason retrying will not fix (e.g. 403)."""


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
