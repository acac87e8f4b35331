"""cross_session_search: every session of one user, for background agents."""

from typing import Unpack

from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.core.user_filter import user_filter
from session_recall.recall.arguments import (
    MatchMode,
    checked_page,
    parse_match,
    parse_since,
    parse_terms,
)
from session_recall.recall.page import RecallPage
from session_recall.recall.pager import Pager, PagerOptions
from session_recall.recall.query import Criteria
from session_recall.recall.scope import SearchScope, required


class CrossSessionSearcher:
    """Searches all sessions of the user it is built for, and no one else's.

    The user is fixed for the searcher's lifetime: `search` has no argument that could
    name another one, and every request is pinned to the user and routed to its shard.
    """

    def __init__(
        self,
        client: Elasticsearch,
        *,
        user_id: str,
        **options: Unpack[PagerOptions],
    ) -> None:
        self._pager = Pager(client, **options)
        alias = options["alias"]
        user_id = required("user_id", user_id)
        self._scope = SearchScope(
            key=("cross_session", alias, user_id),
            pinned=tuple(user_filter(user_id)),
            routing=user_id,
        )

    def search(
        self,
        query: str,
        *,
        match: MatchMode = "any",
        since: str | Instant | None = None,
        page: int = 0,
        cursor: str | None = None,
    ) -> RecallPage:
        """Events whose text holds any (or all) of the comma-separated terms, oldest first.

        Each term is a keyword or phrase, matched whole words, ignoring case. `since`
        keeps events at or after an ISO-8601 instant such as 2026-07-01T00:00:00Z.
        """
        criteria = Criteria(parse_terms(query), parse_match(match), parse_since(since))
        page = checked_page(page)
        state = self._pager.resume(cursor, scope_key=self._scope.key, criteria=criteria, page=page)
        return self._pager.fetch(self._scope, criteria, page=page, state=state)
