"""Recall: search a user's past sessions, pushed down to Elasticsearch.

Three searchers, each bound to its scope when built; `search` only chooses what to
look for and which page:

- `CrossSessionSearcher`: every session of one user (cross_session_search);
- `ConversationSearcher`: one session of one user (conversation_search); its `read`
  pages through the whole session;
- `CrossConversationSearcher`: a contact's recent conversations in one inbox, within
  one user.

`EventReader` reads a user's events whole by their id (what a tool's bounded answer
cut). `SessionLister` lists a user's sessions (`SessionsPage` of `SessionSummary`: first and
last instant, number of events), a page at a time.

Each returns a `RecallPage` of `RecallItem`s, oldest first, and a signed
`next_cursor`. A fourth, `MemorySearcher` (memory_search), answers a natural-language
question by relevance (keywords, vectors, or both fused) with each hit's neighbours,
in a `MemorySearchResult`. Errors derive from `RecallError` and say what to do next. The package
only ever runs searches: it never writes, deletes or runs scripts.

    searchers = Searchers(client, alias="session-events", cursor_key=load_cursor_key(home))
    page = searchers.cross_session(user_id="u1").search("we decided, let's go with")
    found = searchers.memory(user_id="u1").search("what did we pick for the database?")
"""

from session_recall.recall.adk_scope import memory_user
from session_recall.recall.arguments import MAX_TERM_LENGTH, MAX_TERMS, MatchMode, has_word
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
    InvalidLimit,
    InvalidMatchMode,
    InvalidPage,
    InvalidQuery,
    InvalidScope,
    InvalidSearchMode,
    InvalidSince,
    InvalidTypes,
    InvalidUntil,
    QueryTooLong,
    RecallError,
    SearchRefused,
    TermTooLong,
    TooManyTerms,
)
from session_recall.recall.event_read import EventReader
from session_recall.recall.memories import (
    MAX_MEMORY_LIMIT,
    MAX_MEMORY_PAGE,
    MemoriesPage,
    MemoriesResult,
    MemoriesSearcher,
)
from session_recall.recall.memory_arguments import (
    DEFAULT_CONTEXT,
    DEFAULT_LIMIT,
    MAX_CONTEXT,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    SEARCH_MODES,
    MemoryRequest,
    SearchMode,
)
from session_recall.recall.memory_result import MemoryHit, MemorySearchResult, Score
from session_recall.recall.memory_search import (
    AsyncMemorySearcher,
    MemorySearcher,
    default_mode_for,
)
from session_recall.recall.page import RecallItem, RecallPage
from session_recall.recall.pager import DEFAULT_PAGE_BYTES, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from session_recall.recall.rerank import RERANK_CANDIDATES, Reranker, RerankFailed
from session_recall.recall.rerank_endpoint import EndpointReranker
from session_recall.recall.rerank_local import LocalReranker, add_reranker, installed_reranker
from session_recall.recall.scope import required
from session_recall.recall.searchers import Searchers
from session_recall.recall.session_events import SessionEvents, stored_instants
from session_recall.recall.session_list import SessionLister, SessionsPage, SessionSummary

__all__ = [
    "DEFAULT_CONTEXT",
    "DEFAULT_LIMIT",
    "DEFAULT_LOOKBACK_DAYS",
    "DEFAULT_PAGE_BYTES",
    "DEFAULT_PAGE_SIZE",
    "MAX_CONTEXT",
    "MAX_LIMIT",
    "MAX_LOOKBACK_DAYS",
    "MAX_MEMORY_LIMIT",
    "MAX_MEMORY_PAGE",
    "MAX_PAGE_SIZE",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "MAX_TERM_LENGTH",
    "RERANK_CANDIDATES",
    "SEARCH_MODES",
    "AsyncMemorySearcher",
    "ConflictingPagination",
    "ConversationSearcher",
    "CrossConversationSearcher",
    "CrossConversationSettings",
    "CrossSessionSearcher",
    "CursorMismatch",
    "EmptyQuery",
    "EndpointReranker",
    "EventReader",
    "IndexNotFound",
    "InvalidCursor",
    "InvalidLimit",
    "InvalidMatchMode",
    "InvalidPage",
    "InvalidQuery",
    "InvalidScope",
    "InvalidSearchMode",
    "InvalidSince",
    "InvalidTypes",
    "InvalidUntil",
    "LocalReranker",
    "MatchMode",
    "MemoriesPage",
    "MemoriesResult",
    "MemoriesSearcher",
    "MemoryHit",
    "MemoryRequest",
    "MemorySearchResult",
    "MemorySearcher",
    "QueryTooLong",
    "RecallError",
    "RecallItem",
    "RecallPage",
    "RerankFailed",
    "Reranker",
    "Score",
    "SearchMode",
    "SearchRefused",
    "Searchers",
    "SessionEvents",
    "SessionLister",
    "SessionSummary",
    "SessionsPage",
    "TermTooLong",
    "TooManyTerms",
    "add_reranker",
    "default_mode_for",
    "has_word",
    "installed_reranker",
    "load_cursor_key",
    "memory_user",
    "required",
    "stored_instants",
]
