"""Recall: search a user's past sessions, pushed down to Elasticsearch.

Three searchers, each bound to its scope when built; `search` only chooses what to
look for and which page:

- `CrossSessionSearcher`: every session of one user (cross_session_search);
- `ConversationSearcher`: one session of one user (conversation_search);
- `CrossConversationSearcher`: a contact's recent conversations in one inbox.

Each returns a `RecallPage` of `RecallItem`s, oldest first, and a signed
`next_cursor`. Errors derive from `RecallError` and say what to do next. The package
only ever runs searches: it never writes, deletes or runs scripts.

    searchers = Searchers(client, alias="session-events", cursor_key=load_cursor_key(home))
    page = searchers.cross_session(user_id="u1").search("we decided, let's go with")
"""

from session_recall.recall.arguments import MAX_TERM_LENGTH, MAX_TERMS, MatchMode
from session_recall.recall.conversation import ConversationSearcher
from session_recall.recall.cross_conversation import CrossConversationSearcher
from session_recall.recall.cross_conversation_settings import (
    DEFAULT_LOOKBACK_DAYS,
    MAX_LOOKBACK_DAYS,
    CrossConversationSettings,
)
from session_recall.recall.cross_session import CrossSessionSearcher
from session_recall.recall.cursor_key import load_cursor_key
from session_recall.recall.errors import (
    ConflictingPagination,
    CursorMismatch,
    EmptyQuery,
    IndexNotFound,
    InvalidCursor,
    InvalidMatchMode,
    InvalidQuery,
    InvalidScope,
    InvalidSince,
    RecallError,
    SearchRefused,
    TermTooLong,
    TooManyTerms,
)
from session_recall.recall.page import RecallItem, RecallPage
from session_recall.recall.pager import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from session_recall.recall.searchers import Searchers

__all__ = [
    "DEFAULT_LOOKBACK_DAYS",
    "DEFAULT_PAGE_SIZE",
    "MAX_LOOKBACK_DAYS",
    "MAX_PAGE_SIZE",
    "MAX_TERMS",
    "MAX_TERM_LENGTH",
    "ConflictingPagination",
    "ConversationSearcher",
    "CrossConversationSearcher",
    "CrossConversationSettings",
    "CrossSessionSearcher",
    "CursorMismatch",
    "EmptyQuery",
    "IndexNotFound",
    "InvalidCursor",
    "InvalidMatchMode",
    "InvalidQuery",
    "InvalidScope",
    "InvalidSince",
    "MatchMode",
    "RecallError",
    "RecallItem",
    "RecallPage",
    "SearchRefused",
    "Searchers",
    "TermTooLong",
    "TooManyTerms",
    "load_cursor_key",
]
