"""Cross-conversation search: a contact's recent conversations in one inbox, of one user.

In scope: chat conversations of the contact in the inbox whose last message falls in
the lookback window, at most `max_conversations` of them, the most recently active
(see `recent_conversations`); all their messages, old ones included; and the current
conversation, always, whatever its age or type. Out: other users, other contacts, other
inboxes, non-chat conversations, and erased ones (their events are gone). Disabled,
only the current conversation is searched.

Every request is pinned to one user and routed to its shard: contact and inbox ids
repeat across users (tenants), so the same contact under another user is another
person. Within the user, a conversation is its session_id. The window is measured
from the instant the first page is served, and a cursor keeps that instant: every
page of a chain searches the same conversations.

Finding the most recently active conversations: a `terms` aggregation over the window
(see `recent_conversations`), not a per-conversation summary kept by the indexer,
which would be barely faster to read (CHANGES.md, "cross-conversation search") and
costs a second write per message, a read-modify-write without scripts (this
distribution has none), and a second thing for erasure to delete and for a crash to
leave stale. The aggregation is exact, always
as fresh as the events, and forgets an erased conversation the moment its events go.
"""

from collections.abc import Callable
from typing import Unpack

from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.core.user_filter import user_filter
from session_recall.recall.arguments import MatchMode, checked_page, parse_match, parse_terms
from session_recall.recall.cross_conversation_settings import CrossConversationSettings
from session_recall.recall.page import RecallPage
from session_recall.recall.pager import Pager, PagerOptions
from session_recall.recall.query import Criteria
from session_recall.recall.recent_conversations import (
    conversations_clause,
    recent_conversations,
    recent_conversations_body,
    window_start,
)
from session_recall.recall.scope import SearchScope, required


class CrossConversationSearcher:
    """Searches the conversations of one contact in one inbox of one user.

    The user, contact and inbox are fixed for the searcher's lifetime; every request
    is pinned to all three and routed to the user's shard.
    """

    def __init__(
        self,
        client: Elasticsearch,
        *,
        user_id: str,
        contact_id: str,
        inbox_id: str,
        settings: CrossConversationSettings | None = None,
        now: Callable[[], Instant] = Instant.now,
        **options: Unpack[PagerOptions],
    ) -> None:
        self._pager = Pager(client, **options)
        self._client = client
        self._alias = options["alias"]
        self._user_id = required("user_id", user_id)
        self._contact_id = required("contact_id", contact_id)
        self._inbox_id = required("inbox_id", inbox_id)
        self._settings = settings if settings is not None else CrossConversationSettings()
        self._now = now
        self._pinned = tuple(
            user_filter(self._user_id, contact_id=self._contact_id, inbox_id=self._inbox_id)
        )

    def search(
        self,
        query: str,
        *,
        current_session_id: str | None,
        match: MatchMode = "any",
        page: int = 0,
        cursor: str | None = None,
    ) -> RecallPage:
        """Messages of this contact's recent conversations that hold any (or all) terms.

        `current_session_id` is the conversation the agent is in, always searched; None
        when there is none yet (then, disabled, nothing is searched).
        """
        criteria = Criteria(parse_terms(query), parse_match(match))
        current = (
            None
            if current_session_id is None
            else required("current_session_id", current_session_id)
        )
        page = checked_page(page)
        key = (
            "cross_conversation",
            self._alias,
            self._contact_id,
            self._inbox_id,
            self._user_id,
            self._settings.model_dump(),
            current,
        )
        state = self._pager.resume(cursor, scope_key=key, criteria=criteria, page=page)
        window_end, recent = None, []
        if self._settings.enabled:
            frozen = state.window_end if state is not None else None
            window_end = self._now() if frozen is None else Instant(frozen)
            recent = self._recent(window_end)
        scope = SearchScope(
            key=key,
            pinned=self._pinned,
            clauses=(conversations_clause(current, recent),),
            routing=self._user_id,
        )
        return self._pager.fetch(scope, criteria, page=page, state=state, window_end=window_end)

    def _recent(self, window_end: Instant) -> list[str]:
        body = recent_conversations_body(
            user_id=self._user_id,
            contact_id=self._contact_id,
            inbox_id=self._inbox_id,
            start=window_start(window_end, self._settings.lookback_days),
            end=window_end,
            limit=self._settings.max_conversations,
        )
        return recent_conversations(
            self._client,
            alias=self._alias,
            body=body,
            routing=self._user_id,
            timeout=self._pager.search_timeout,
        )
