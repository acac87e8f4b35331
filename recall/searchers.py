"""The searchers of one alias, made to order for each caller's scope.

An adapter (CLI, HTTP, MCP) holds one `Searchers` for its lifetime and binds a
searcher per request from the scope it got from its caller (a flag, a URL path, the
MCP command line); a model's arguments never reach this module.
"""

from dataclasses import dataclass
from functools import cached_property

from elasticsearch import Elasticsearch

from session_recall.embeddings import Embedder
from session_recall.recall.conversation import ConversationSearcher
from session_recall.recall.cross_conversation import CrossConversationSearcher
from session_recall.recall.cross_conversation_settings import CrossConversationSettings
from session_recall.recall.cross_session import CrossSessionSearcher
from session_recall.recall.event_read import EventReader
from session_recall.recall.memories import MemoriesSearcher
from session_recall.recall.memory_recipe import DEFAULT_RECIPE, Recipe
from session_recall.recall.memory_search import MemorySearcher
from session_recall.recall.pager import PagerOptions
from session_recall.recall.partition_map import PartitionMap
from session_recall.recall.rerank import RERANK_CANDIDATES, Reranker
from session_recall.recall.session_list import SessionLister


@dataclass(frozen=True)
class Searchers:
    client: Elasticsearch
    alias: str
    cursor_key: bytes
    # None: Elasticsearch's default, which the index template keeps.
    max_result_window: int | None = None
    # Embeds memory_search's queries; None: memory_search runs on keywords.
    embedder: Embedder | None = None
    # Seconds Elasticsearch may spend on each search (its `timeout`); None: no limit.
    search_timeout: float | None = None
    # The bytes of a read's page, at most; None: the pager's default (DEFAULT_PAGE_BYTES).
    page_bytes: int | None = None
    # Orders memory_search's best fused hits again; None: the fused order is the answer.
    reranker: Reranker | None = None
    rerank_candidates: int = RERANK_CANDIDATES

    @cached_property
    def _partitions(self) -> PartitionMap:
        """One map of the alias's partitions for every searcher made here."""
        return PartitionMap(self.client, self.alias)

    def _shared(self, page_size: int | None) -> PagerOptions:
        return {
            "partitions": self._partitions,
            "alias": self.alias,
            "cursor_key": self.cursor_key,
            "page_size": page_size,
            "max_result_window": self.max_result_window,
            "search_timeout": self.search_timeout,
            "page_bytes": self.page_bytes,
        }

    def cross_session(self, *, user_id: str, page_size: int | None = None) -> CrossSessionSearcher:
        return CrossSessionSearcher(self.client, user_id=user_id, **self._shared(page_size))

    def conversation(
        self, *, user_id: str, session_id: str, page_size: int | None = None
    ) -> ConversationSearcher:
        return ConversationSearcher(
            self.client, user_id=user_id, session_id=session_id, **self._shared(page_size)
        )

    def cross_conversation(
        self,
        *,
        user_id: str,
        contact_id: str,
        inbox_id: str,
        settings: CrossConversationSettings | None = None,
        page_size: int | None = None,
    ) -> CrossConversationSearcher:
        return CrossConversationSearcher(
            self.client,
            user_id=user_id,
            contact_id=contact_id,
            inbox_id=inbox_id,
            settings=settings,
            **self._shared(page_size),
        )

    def memory(
        self, *, user_id: str, dense_weight: float | None = None, recipe: Recipe | None = None
    ) -> MemorySearcher:
        """`dense_weight`: the vector list's weight in hybrid mode, when not the
        embedder model's own (see `fusion`); `recipe`: the ranking steps, when not the
        default ones (see `memory_recipe`)."""
        return MemorySearcher(
            self.client,
            user_id=user_id,
            alias=self.alias,
            embedder=self.embedder,
            search_timeout=self.search_timeout,
            dense_weight=dense_weight,
            recipe=DEFAULT_RECIPE if recipe is None else recipe,
            reranker=self.reranker,
            rerank_candidates=self.rerank_candidates,
        )

    def memories(self, *, user_id: str) -> MemoriesSearcher:
        """The user's kept memories (`memories`): search and list."""
        return MemoriesSearcher(
            self.client,
            user_id=user_id,
            alias=self.alias,
            embedder=self.embedder,
            cursor_key=self.cursor_key,
            search_timeout=self.search_timeout,
        )

    def events(self, *, user_id: str) -> EventReader:
        """Reads the user's events whole by their id."""
        return EventReader(
            self.client, alias=self.alias, user_id=user_id, search_timeout=self.search_timeout
        )

    def sessions(self, *, user_id: str, page_size: int | None = None) -> SessionLister:
        return SessionLister(
            self.client,
            alias=self.alias,
            user_id=user_id,
            page_size=page_size,
            search_timeout=self.search_timeout,
        )
