"""Recall of kept memories: one user's, by relevance (`search`) or newest first (`list`).

Every request is pinned to the user the searcher is built for (`SearchScope`, as the
events' searches) and routed to its shard, so another user's memory is never read.
Current memories only, unless `include_superseded` (then the history comes after the
current ones). `search` runs keywords (the statement's words and stems, BM25) and,
with an embedder, the statement vectors nearest the query's, in one `msearch`, fused
as memory_search fuses (`fusion`), then ordered by `memory_order`: current memories
whose subject the question names raised, the newest of them first. `list` pages
newest first with `search_after` and a signed cursor.

    searcher = MemoriesSearcher(client, user_id="alice", alias="session-events",
                                embedder=embedder, cursor_key=key)
    found = searcher.search("which database for billing")
"""

from collections.abc import Sequence
from typing import Any

from elasticsearch import Elasticsearch
from pydantic import BaseModel, ConfigDict

from session_recall.core.index_names import memory_index
from session_recall.core.instant import Instant
from session_recall.core.kept_memories import MEMORY_KINDS, Memory
from session_recall.core.stems import stems
from session_recall.core.user_filter import user_filter
from session_recall.embeddings import Embedder, EmbeddingError, query_vector, vector_field
from session_recall.recall import transport
from session_recall.recall.arguments import has_word, no_word
from session_recall.recall.cursor import CursorCodec, CursorState
from session_recall.recall.errors import InvalidLimit, InvalidQuery, InvalidTypes, QueryTooLong
from session_recall.recall.fusion import dense_weight_for, fuse
from session_recall.recall.memory_order import ordered
from session_recall.recall.query import SortPosition
from session_recall.recall.scope import SearchScope, binding, required

DEFAULT_MEMORY_LIMIT = 10
# As memory_search's: a model reads every memory returned.
MAX_MEMORY_LIMIT = 50
DEFAULT_MEMORY_PAGE = 50
MAX_MEMORY_PAGE = 500
MAX_MEMORY_QUERY_CHARS = 1000
# Each ranking this deep before fusion, however few are asked for.
_RANK_WINDOW = 50
_ORDER = [{"valid_from": "desc"}, {"memory_id": "asc"}]
_Floats = list[float]  # `list` is a method's name inside the searcher
_SOURCE_EXCLUDES = ["embeddings", "stems", "source_ids", "sources_since", "embedding_models"]


class MemoriesResult(BaseModel):
    """Memories best first; `notice` says when the search ran on keywords alone."""

    model_config = ConfigDict(frozen=True)

    memories: list[Memory]
    mode: str
    notice: str | None = None


class MemoriesPage(BaseModel):
    """Memories newest first; `next_cursor` is None on the last page."""

    model_config = ConfigDict(frozen=True)

    memories: list[Memory]
    next_cursor: str | None = None


def _kinds(kinds: Sequence[str] | None) -> list[str]:
    chosen = list(dict.fromkeys(kinds or []))
    unknown = [k for k in chosen if k not in MEMORY_KINDS]
    if unknown:
        raise InvalidTypes(
            f"{unknown[0]!r} is not a kind of memory.",
            hint=f"Use one or more of: {', '.join(MEMORY_KINDS)}.",
        )
    return chosen


def _bounded(name: str, value: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise InvalidLimit(f"{name} must be between 1 and {high}, not {value!r}.",
                           hint=f"Pass a {name} from 1 to {high}.")  # fmt: skip
    return value


class MemoriesSearcher:
    """Searches and lists the kept memories of the user it is built for, and no one else's."""

    def __init__(
        self,
        client: Elasticsearch,
        *,
        user_id: str,
        alias: str,
        embedder: Embedder | None = None,
        cursor_key: bytes | None = None,
        search_timeout: float | None = None,
    ) -> None:
        self._client = client
        self._index = memory_index(alias)
        user = required("user_id", user_id)
        self._scope = SearchScope(
            key=("memories", user), pinned=tuple(user_filter(user)), routing=user
        )
        self._embedder = embedder
        self._codec = None if cursor_key is None else CursorCodec(cursor_key)
        self._timeout = search_timeout

    def _filters(self, kinds: list[str], include_superseded: bool) -> list[dict[str, Any]]:
        filters = self._scope.filters()
        if kinds:
            filters.append({"terms": {"kind": kinds}})
        if not include_superseded:
            filters.append({"bool": {"must_not": [{"exists": {"field": "valid_to"}}]}})
        return filters

    def search(
        self,
        query: str,
        *,
        kinds: Sequence[str] | None = None,
        include_superseded: bool = False,
        limit: int = DEFAULT_MEMORY_LIMIT,
    ) -> MemoriesResult:
        """The memories that answer `query` (a question, up to 1,000 characters), best
        first: current ones only unless `include_superseded`; `kinds` keeps those kinds."""
        if not isinstance(query, str):
            raise InvalidQuery("The query must be a string.", hint="Ask a question in words.")
        if not has_word(query):  # refused as every search refuses it (`arguments`)
            raise no_word(query)
        if len(query) > MAX_MEMORY_QUERY_CHARS:
            raise QueryTooLong(
                f"The query is {len(query)} characters long; the limit is "
                f"{MAX_MEMORY_QUERY_CHARS}.",
                hint="Ask a shorter question.",
            )
        limit = _bounded("limit", limit, MAX_MEMORY_LIMIT)
        filters = self._filters(_kinds(kinds), include_superseded)
        keyword = {
            "query": {
                "bool": {
                    "filter": filters,
                    "should": [
                        {"match": {"statement": query}},
                        {"match": {"stems": stems(query) or query}},
                    ],
                    "minimum_should_match": 1,
                }
            },
            "size": _RANK_WINDOW,
            "_source": {"excludes": _SOURCE_EXCLUDES},
            "track_total_hits": False,
        }
        bodies = [keyword]
        vector, notice = self._query_vector(query)
        model = None if self._embedder is None else self._embedder.model_id
        if vector is not None and model is not None:
            bodies.append(
                {
                    "knn": {
                        "field": vector_field(model),
                        "query_vector": vector,
                        "k": _RANK_WINDOW,
                        "num_candidates": _RANK_WINDOW * 2,
                        "filter": filters,
                    },
                    "size": _RANK_WINDOW,
                    "_source": {"excludes": _SOURCE_EXCLUDES},
                    "track_total_hits": False,
                }
            )
        answers = transport.msearch(
            self._client,
            alias=self._index,
            bodies=bodies,
            routing=self._scope.routing,
            timeout=self._timeout,
        )
        rankings = [transport.hits(answer) for answer in answers]
        by_id = {str(hit["_id"]): hit for ranking in rankings for hit in ranking}
        scored = [[(str(h["_id"]), float(h.get("_score") or 0.0)) for h in r] for r in rankings]
        fused = fuse(scored[0], scored[1] if len(scored) > 1 else [],
                     dense_weight=dense_weight_for(model))  # fmt: skip
        # What the question names the subject of first, newest first; history last.
        found = ordered(query, [(Memory.from_source(by_id[f.key]["_source"]), f.score)
                                for f in fused])  # fmt: skip
        mode = "hybrid" if len(bodies) > 1 else "keyword"
        return MemoriesResult(memories=found[:limit], mode=mode, notice=notice)

    def list(
        self,
        *,
        kinds: Sequence[str] | None = None,
        include_superseded: bool = False,
        page_size: int = DEFAULT_MEMORY_PAGE,
        cursor: str | None = None,
    ) -> MemoriesPage:
        """This user's memories newest first (by `validFrom`), a page at a time; pass
        `next_cursor` back as `cursor` for the next page."""
        page_size = _bounded("page_size", page_size, MAX_MEMORY_PAGE)
        chosen = _kinds(kinds)
        bound = binding(["memories.list", chosen, include_superseded, page_size])
        scope = binding(list(self._scope.key))
        after: list[Any] | None = None
        if cursor is not None:
            state = self._cursors().decode(
                cursor, scope=scope, query=bound, page_size=page_size, searching=False
            )
            after = [state.after.timestamp, state.after.event_id]
        body: dict[str, Any] = {
            "query": {"bool": {"filter": self._filters(chosen, include_superseded)}},
            "sort": _ORDER,
            "size": page_size + 1,  # one more: whether a next page exists
            "_source": {"excludes": _SOURCE_EXCLUDES},
            "track_total_hits": False,
        }
        if after is not None:
            body["search_after"] = after
        answer = transport.search(
            self._client, alias=self._index, body=body, routing=self._scope.routing,
            timeout=self._timeout,
        )  # fmt: skip
        hits = transport.hits(answer)
        page, more = hits[:page_size], len(hits) > page_size
        next_cursor = None
        if more and page:
            last = page[-1]["sort"]
            state = CursorState(
                scope=scope,
                query=bound,
                as_of=Instant.now().nanos,
                after=SortPosition(int(last[0]), str(last[1]), self._scope.routing or ""),
                page_size=page_size,
            )
            next_cursor = self._cursors().encode(state)
        memories = [Memory.from_source(hit["_source"]) for hit in page]
        return MemoriesPage(memories=memories, next_cursor=next_cursor)

    def _cursors(self) -> CursorCodec:
        if self._codec is None:
            raise InvalidQuery(
                "This searcher has no cursor key, so it cannot page.",
                hint="Build it with cursor_key=load_cursor_key(home).",
            )
        return self._codec

    def _query_vector(self, text: str) -> tuple[_Floats | None, str | None]:
        if self._embedder is None:
            return None, None
        try:
            vector = query_vector(self._embedder, text)
        except EmbeddingError as err:
            return None, f"The query could not be embedded ({err}); searched by keywords."
        if vector is None:
            return None, None
        values = vector.tolist() if hasattr(vector, "tolist") else list(vector)
        return [float(v) for v in values], None


__all__ = [
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_MEMORY_PAGE",
    "MAX_MEMORY_LIMIT",
    "MAX_MEMORY_PAGE",
    "MemoriesPage",
    "MemoriesResult",
    "MemoriesSearcher",
]
