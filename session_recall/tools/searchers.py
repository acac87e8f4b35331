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

    @classmethod
    def from_settings(cls, client: Elasticsearch, settings: Settings) -> "Searchers":
        return cls(client=client, alias=settings.index, cursor_key=settings.signing_key())

    def cross_session(self, *, user_id: str, page_size: int = 10) -> CrossSessionSearcher:
        return CrossSessionSearcher(
            self.client,
            alias=self.alias,
            user_id=user_id,
            cursor_key=self.cursor_key,
            page_size=page_size,
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
        )
