"""conversation_search: the one session the calling application is in; and reading
that session whole, a page at a time."""

from typing import Unpack

from elasticsearch import Elasticsearch

from session_recall.core.user_filter import user_filter
from session_recall.recall.arguments import checked_page, parse_phrase
from session_recall.recall.page import RecallPage
from session_recall.recall.pager import Pager, PagerOptions
from session_recall.recall.query import Criteria
from session_recall.recall.scope import SearchScope, required


class ConversationSearcher:
    """Searches one session of one user.

    The application binds the session per request (building a searcher is cheap and
    makes no request); the model can only choose what to look for.
    """

    def __init__(
        self,
        client: Elasticsearch,
        *,
        user_id: str,
        session_id: str,
        **options: Unpack[PagerOptions],
    ) -> None:
        self._pager = Pager(client, **options)
        alias = options["alias"]
        user_id = required("user_id", user_id)
        session_id = required("session_id", session_id)
        self._scope = SearchScope(
            key=("conversation", alias, user_id, session_id),
            pinned=tuple(user_filter(user_id, session_id=session_id)),
            routing=user_id,
        )

    def search(self, query: str, *, page: int = 0, cursor: str | None = None) -> RecallPage:
        """Events of this session whose text holds the keyword or phrase, oldest first.

        The query is taken whole, commas included, and matched ignoring case.
        """
        return self._fetch(Criteria((parse_phrase(query),)), page, cursor)

    def read(self, *, page: int = 0, cursor: str | None = None) -> RecallPage:
        """Every event of this session, oldest first, a page at a time.

        Not offered to models: the conversation tool only ever calls `search`. A
        cursor of a search does not carry over to a read, nor the other way round.
        Each event comes whole, payload included, and a page is bounded by bytes as
        well (`page_bytes`): a page of large events ends early, its cursor going on.
        """
        return self._fetch(Criteria(()), page, cursor, whole=True)

    def _fetch(
        self, criteria: Criteria, page: int, cursor: str | None, *, whole: bool = False
    ) -> RecallPage:
        page = checked_page(page)
        state = self._pager.resume(cursor, scope_key=self._scope.key, criteria=criteria, page=page)
        return self._pager.fetch(self._scope, criteria, page=page, state=state, whole=whole)
