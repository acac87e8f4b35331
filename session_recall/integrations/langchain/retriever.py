"""`SessionRecallRetriever`: memory_search as a LangChain `BaseRetriever`, bound to one user.

Each hit is a `Document`: the event's text, with its session id, timestamp, type, event
id, score and the turns around it in `metadata`. `k` (hits, 1-50) is set at
construction and may be given per call (`invoke(query, k=3)`), as may `mode`.
`invoke` runs on the sync client; `ainvoke` on the async one (`AsyncElasticsearch`,
made for the call and closed after it, so it never outlives its event loop).

Texts are bounded as every tool's answer is (`tools.bounds`, set by
SESSION_RECALL_TOOL_HIT_CHARS and SESSION_RECALL_TOOL_ANSWER_CHARS): a cut one ends with
`…[truncated, N characters]`, and its `metadata["full_length"]` is N.
"""

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, PrivateAttr

from session_recall.config import Settings
from session_recall.integrations.store import DEFAULT_TIMEOUT_S, EventStore
from session_recall.recall import (
    DEFAULT_CONTEXT,
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MemoryHit,
    MemoryRequest,
    MemorySearchResult,
    RecallItem,
    required,
)
from session_recall.tools.bounds import OutputBounds, bounded_memory


class SessionRecallRetriever(BaseRetriever):
    """memory_search over every session of `user_id`, and no one else's. `settings`
    default to the environment's (`ELASTICSEARCH_URL`, credentials,
    `SESSION_RECALL_INDEX`...); `index` overrides the alias.

    Frozen: the user is bound when the retriever is built, and no assignment
    (`retriever.user_id = "other"`) changes it, nor any other field."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    user_id: str
    k: int = Field(default=DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    mode: str | None = None
    context: int = DEFAULT_CONTEXT
    index: str | None = None
    settings: Settings | None = Field(default=None, exclude=True, repr=False)
    timeout: float = DEFAULT_TIMEOUT_S

    _store: EventStore = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        required("user_id", self.user_id)  # `InvalidScope` now, not at the first call
        self._store = EventStore(self.settings, index=self.index, timeout=self.timeout)
        self._request("check", k=self.k, mode=self.mode)  # a bad k or mode fails here

    def _request(self, query: str, *, k: int | None, mode: str | None) -> MemoryRequest:
        return MemoryRequest.parse(
            query,
            mode=self.mode if mode is None else mode,
            limit=self.k if k is None else k,
            context=self.context,
        )

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        mode: str | None = None,
    ) -> list[Document]:
        searcher = self._store.memory(self.user_id)
        return self._documents(searcher.answer(self._request(query, k=k, mode=mode)))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        mode: str | None = None,
    ) -> list[Document]:
        request = self._request(query, k=k, mode=mode)
        async with self._store.async_memory(self.user_id) as searcher:
            return self._documents(await searcher.answer(request))

    def _documents(self, result: MemorySearchResult) -> list[Document]:
        bounded = bounded_memory(result, OutputBounds.of(self._store.settings))
        return [_document(hit) for hit in bounded.hits]


def _document(hit: MemoryHit) -> Document:
    event = hit.event
    return Document(
        id=event.event_id,
        page_content=event.text,
        metadata={
            "event_id": event.event_id,
            "session_id": event.session_id,
            "timestamp": event.timestamp.isoformat(),
            "type": event.type,
            "score": hit.score.fused,
            "keyword_rank": hit.score.keyword_rank,
            "vector_rank": hit.score.vector_rank,
            "before": [_turn(item) for item in hit.before],
            "after": [_turn(item) for item in hit.after],
            **_whole(event),
        },
    )


def _turn(item: RecallItem) -> dict[str, Any]:
    turn = {"timestamp": item.timestamp.isoformat(), "type": item.type, "text": item.text}
    return turn | _whole(item) | ({"event_id": item.event_id} if item.full_length else {})


def _whole(item: RecallItem) -> dict[str, Any]:
    """A cut text's whole length (its event id is read to have it whole)."""
    return {} if item.full_length is None else {"full_length": item.full_length}
