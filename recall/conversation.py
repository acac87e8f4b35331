"""conversation_search: the one session the calling application is in."""

from elasticsearch import Elasticsearch

from session_recall.recall.arguments import clamp_page, parse_phrase
from session_recall.recall.page import RecallPage
from session_recall.recall.pager import DEFAULT_MAX_RESULT_WINDOW, Pager
from session_recall.recall.query import Criteria
from session_recall.recall.scope import Scope, required


class ConversationSearcher:
    """Searches one session of one user.

    The application binds the session per request (building a searcher is cheap and
    makes no request); the model can only choose what to look for.
    """

    def __init__(
        self,
        client: Elasticsearch,
        *,
        alias: str,
        user_id: str,
        session_id: str,
        cursor_key: bytes,
        page_size: int = 10,
        max_result_window: int = DEFAULT_MAX_RESULT_WINDOW,
        search_timeout: float | None = None,
    ) -> None:
        user_id = required("user_id", user_id)
        session_id = required("session_id", session_id)
        self._scope = Scope(
            key=("conversation", alias, user_id, session_id),
            pinned=(("user_id", user_id), ("session_id", session_id)),
            routing=user_id,
        )
        self._pager = Pager(
            client,
            alias=alias,
            page_size=page_size,
            cursor_key=cursor_key,
            max_result_window=max_result_window,
            search_timeout=search_timeout,
        )

    def search(self, query: str, *, page: int = 0, cursor: str | None = None) -> RecallPage:
        """Events of this session whose text holds the keyword or phrase, oldest first.

        The query is taken whole, commas included, and matched ignoring case.
        """
        criteria = Criteria((parse_phrase(query),))
        page = clamp_page(page)
        state = self._pager.resume(cursor, scope_key=self._scope.key, criteria=criteria, page=page)
        return self._pager.fetch(self._scope, criteria, page=page, state=state)
