"""Builds scoped searchers from the settings, for the CLI, HTTP and MCP adapters.

Every adapter names the scope it got from its caller (a flag, a URL path, the MCP
command line) here, once; the model's arguments never reach this module.
"""

from dataclasses import dataclass

from elasticsearch import Elasticsearch

from session_recall.config import Settings
from session_recall.recall import (
    ConversationSearcher,
    CrossConversationSearcher,
    CrossConversationSettings,
    CrossSessionSearcher,
)


@dataclass(frozen=True)
class Searchers:
    client: Elasticsearch
    alias: str
    cursor_key: bytes
    # Seconds Elasticsearch may spend on each search; None: no limit.
    search_timeout: float | None = None

    @classmethod
    def from_settings(
        cls, client: Elasticsearch, settings: Settings, *, search_timeout: float | None = None
    ) -> "Searchers":
        return cls(
            client=client,
            alias=settings.index,
            cursor_key=settings.signing_key(),
            search_timeout=search_timeout,
        )

    def cross_session(self, *, user_id: str, page_size: int = 10) -> CrossSessionSearcher:
        return CrossSessionSearcher(
            self.client,
            alias=self.alias,
            user_id=user_id,
            cursor_key=self.cursor_key,
            page_size=page_size,
            search_timeout=self.search_timeout,
        )

    def conversation(
        self, *, user_id: str, session_id: str, page_size: int = 10
    ) -> ConversationSearcher:
        return ConversationSearcher(
            self.client,
            alias=self.alias,
            user_id=user_id,
            session_id=session_id,
            cursor_key=self.cursor_key,
            page_size=page_size,
            search_timeout=self.search_timeout,
        )

    def cross_conversation(
        self,
        *,
        contact_id: str,
        inbox_id: str,
        settings: CrossConversationSettings,
        user_id: str | None = None,
        page_size: int = 10,
    ) -> CrossConversationSearcher:
        return CrossConversationSearcher(
            self.client,
            alias=self.alias,
            contact_id=contact_id,
            inbox_id=inbox_id,
            settings=settings,
            user_id=user_id,
            cursor_key=self.cursor_key,
            page_size=page_size,
            search_timeout=self.search_timeout,
        )
