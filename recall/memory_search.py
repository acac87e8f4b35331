"""memory_search: a user's past events that answer a natural-language question.

Three modes, all pinned to the one user the searcher is built for and routed to its
shard:

- `keyword`: BM25 over the query's words, relevance first;
- `semantic`: the events whose vectors are nearest the query's (kNN, user pre-filter);
- `hybrid`: both in one `msearch`, their normalised scores weighed together (see
  `fusion`, and for why in the client), then each hit's score mixed with its
  session's (`memory_recipe`: the steps measured on LoCoMo, and which ones ship). The
  default whenever an embedder is configured.

Then one more `msearch` fetches each hit's neighbours in its session, first in the
hit's own partition: sent to the alias, each of those twenty searches (for ten hits)
would visit every partition, if only for the pre-filter round. Partitions split time,
so the turns nearest a hit in its own partition are nearer than any in another one; a
look that finds fewer than it asked for (the session's first or last turns, or a
session that crosses into another period) is sent again to the whole alias, in one
more `msearch`, so the neighbours are the same either way.

A reranker, when one is configured (`rerank`), orders the best fused hits again
before they are cut to `limit`; when it fails, they keep the fused order and `notice`
says so.

When the query cannot be embedded (no embedder, a local model not installed, or it
fails), the search runs on keywords and the result says so in `notice`: a question
still gets an answer. When some or all of the events searched lack the model's
vectors (stored before the model, or not enriched yet), the hits are those keywords
find for them, and `notice` gives their share.
"""

import asyncio
from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from typing import Any, cast

from elasticsearch import AsyncElasticsearch, Elasticsearch

from session_recall.core.errors import ConfigurationError
from session_recall.core.index_names import session_index
from session_recall.core.instant import Instant
from session_recall.core.partitions import parse_partition
from session_recall.core.stems import stems
from session_recall.core.stopwords import content_terms
from session_recall.embeddings import (
    Embedder,
    EmbeddingError,
    query_vector,
    vector_field,
)
from session_recall.recall import transport
from session_recall.recall.fusion import Fused, combined, dense_weight_for, fuse
from session_recall.recall.memory_arguments import (
    DEFAULT_CONTEXT,
    DEFAULT_LIMIT,
    MemoryRequest,
    SearchMode,
)
from session_recall.recall.memory_plan import Key, Searches, key_of, scored
from session_recall.recall.memory_query import (
    coverage_bodies,
    event_filters,
    keyword_body,
    knn_body,
    neighbour_bodies,
)
from session_recall.recall.memory_recipe import DEFAULT_RECIPE, Ranking, Recipe
from session_recall.recall.memory_result import MemoryHit, MemorySearchResult, Score
from session_recall.recall.page import RecallItem
from session_recall.recall.query import Body
from session_recall.recall.rerank import (
    RERANK_CANDIDATES,
    Rerank,
    Reranker,
    RerankFailed,
    candidates_of,
    failed_notice,
    reranked,
)
from session_recall.recall.scope import required
from session_recall.recall.session_ranking import bm25_body, bm25_scores

# Each ranking is this deep before fusion, however few hits are asked for: an event
# ranked 30th by keywords and 5th by meaning must get its chance to rise.
RANK_WINDOW = 50


def default_mode_for(embedder_configured: bool) -> SearchMode:
    """What memory_search does when no mode is asked for: hybrid with an embedder,
    keyword without one (every surface that reports the mode asks this)."""
    return "hybrid" if embedder_configured else "keyword"


class MemorySearcher:
    """Searches all sessions of the user it is built for by relevance, and no one else's."""

    def __init__(
        self,
        client: Elasticsearch,
        *,
        user_id: str,
        alias: str,
        embedder: Embedder | None = None,
        search_timeout: float | None = None,
        dense_weight: float | None = None,
        recipe: Recipe = DEFAULT_RECIPE,
        reranker: Reranker | None = None,
        rerank_candidates: int = RERANK_CANDIDATES,
    ) -> None:
        self._client = client
        self._alias = alias
        self._user_id = required("user_id", user_id)
        self._embedder = embedder
        self._search_timeout = search_timeout
        # The vector list's weight in hybrid mode: given, or the embedder model's own.
        self.dense_weight = (
            dense_weight_for(embedder.model_id if embedder else None)
            if dense_weight is None
            else dense_weight
        )
        self.recipe = recipe
        # Orders the best `rerank_candidates` fused hits again; None: the fused order.
        self.reranker = reranker
        self.rerank_candidates = rerank_candidates

    @property
    def default_mode(self) -> SearchMode:
        return default_mode_for(self._embedder is not None)

    # Its arguments are `MemoryRequest.parse`'s, spelled out for the reference pages.
    def search(
        self,
        query: str,
        *,
        mode: str | None = None,
        since: str | Instant | None = None,
        until: str | Instant | None = None,
        types: Sequence[str] | None = None,
        limit: int = DEFAULT_LIMIT,
        context: int = DEFAULT_CONTEXT,
    ) -> MemorySearchResult:
        """Events that answer `query`, best first, each with its neighbours.

        `query` is a question or a message, up to 1,000 characters. `since` and
        `until` bound the events' instants (ISO-8601, inclusive); `types` keeps those
        event types; `limit` (1-50) hits, each with `context` (0-10) events of its
        session before and after it.
        """
        return self.answer(
            MemoryRequest.parse(
                query, mode=mode, since=since, until=until, types=types, limit=limit,
                context=context,
            )
        )  # fmt: skip

    def answer(self, request: MemoryRequest) -> MemorySearchResult:
        """`search` with its arguments already checked (`MemoryRequest.parse`)."""
        vector, notice = self._query_vector(request)
        return _drive(self._plan(request, vector, notice), self._msearch, self._rerank)

    def _plan(
        self, request: MemoryRequest, vector: list[float] | None, notice: str | None
    ) -> "_Plan":
        """The search as a plan: it yields the searches of each `msearch` and is sent
        their hits back, so the sync and the async searcher run the same steps."""
        text, start, end, kinds = request.text, request.since, request.until, request.types
        limit, context = request.limit, request.context
        requested = self.default_mode if request.mode is None else request.mode
        used: SearchMode = requested if vector is not None else "keyword"
        # The ranking steps were measured in hybrid mode, and apply there alone.
        recipe = self.recipe if used == "hybrid" else Recipe()
        filters = event_filters(self._user_id, since=start, until=end, types=kinds)
        depth = RANK_WINDOW if used == "hybrid" else limit
        words, stemmed = content_terms(text), stems(text)
        bodies: list[Body] = []
        if used != "semantic":
            bodies.append(keyword_body(filters, words, stemmed=stemmed, size=depth))
        model = self._embedder.model_id if self._embedder is not None else None
        vector_models: list[str] = []
        if vector is not None and model is not None:
            vector_models = recipe.vector_models(model)
            extra = recipe.knn_source()
            for vectors_of in vector_models:
                field = vector_field(vectors_of)
                bodies.append(knn_body(filters, vector, field=field, size=depth, extra=extra))
        # Beside the lists, in the same round trip: the sessions' BM25 over their text. A
        # key made before session documents may not read them: the step is left out.
        indices: list[str | None] = [None] * len(bodies)
        if recipe.session_ranking:
            bodies.append(bm25_body(self._user_id, stemmed))
            indices.append(session_index(self._alias))
        optional = [index is not None for index in indices]
        if vector is not None and model is not None:
            bodies += coverage_bodies(filters, model)
            indices += [None, None]
            optional += [False, False]
        answers = yield Searches(bodies, indices, optional)
        rankings = [transport.hits(answer) for answer in answers]
        keyword = rankings[0] if used != "semantic" else []
        lists = rankings[int(used != "semantic") :][: len(vector_models)]
        session_bm25: dict[str, float] = {}
        if recipe.session_ranking:
            session_bm25 = bm25_scores(rankings[int(used != "semantic") + len(vector_models)])
        if vector is not None and model is not None:
            notice = _coverage_notice(model, used, *answers[-2:])
        ranking = Ranking(
            filters, words, stemmed, depth, vector, model, self.dense_weight,
            session_bm25=session_bm25, text=text,
        )  # fmt: skip
        if keyword:
            keyword = yield from recipe.keyword(keyword, ranking)
        nearest = combined(*(scored(hits) for hits in lists)) if lists else []
        if nearest:
            nearest = recipe.nearest(nearest, lists)
        fused = fuse(scored(keyword), nearest, dense_weight=self.dense_weight)
        fused, more = yield from recipe.fused(fused, keyword, nearest, ranking)
        by_key = {key_of(hit): hit for hits in (keyword, *lists, *more) for hit in hits}
        sessions = {key: str(hit["_source"].get("session_id")) for key, hit in by_key.items()}
        ranking = replace(ranking, nearest=nearest)
        fused = yield from recipe.sessions(fused, sessions, ranking)
        fused, notice = yield from self._reranked(text, fused, by_key, notice)
        fused = fused[:limit]
        events = [_item(by_key[f.key]) for f in fused]
        around = yield from self._neighbours(events, [f.key[0] for f in fused], context)
        hits = [
            MemoryHit(
                event=event,
                before=before,
                after=after,
                score=Score(keyword_rank=f.keyword_rank, vector_rank=f.vector_rank, fused=f.score),
            )
            for f, event, (before, after) in zip(fused, events, around, strict=True)
        ]
        return MemorySearchResult(hits=hits, mode=used, requested_mode=requested, notice=notice)

    def _query_vector(self, request: MemoryRequest) -> tuple[list[float] | None, str | None]:
        """The query's vector when the mode needs one, or why the search runs on
        keywords (the notice)."""
        text = request.text
        if (self.default_mode if request.mode is None else request.mode) == "keyword":
            return None, None
        if self._embedder is None:
            return None, "No embedder is configured, so the search ran on keywords only."
        try:
            vector = query_vector(self._embedder, text)
        except EmbeddingError as err:
            return None, f"The embedder failed ({err.message}); the search ran on keywords only."
        except ConfigurationError as err:  # a local model not installed, say
            return None, f"{err} The search ran on keywords only."
        if vector is None:
            return None, "The query has no words to embed; the search ran on keywords only."
        return [float(x) for x in vector], None

    def _reranked(
        self, text: str, fused: list[Fused[Key]], by_key: dict[Key, Body], notice: str | None
    ) -> Generator[Rerank, list[float] | RerankFailed, tuple[list[Fused[Key]], str | None]]:
        """The best fused hits in the reranker's order, or in the fused order and a
        notice that says why when it failed; the fused order without a reranker."""
        if self.reranker is None or len(fused) < 2:
            return fused, notice
        texts = [str(by_key[f.key].get("_source", {}).get("text") or "") for f in fused]
        answer = yield Rerank(text, candidates_of(texts, self.rerank_candidates))
        if isinstance(answer, RerankFailed):
            failed = failed_notice(self.reranker.name, answer.reason)
            return fused, failed if notice is None else f"{notice} {failed}"
        return reranked(fused, answer), notice

    def _rerank(self, request: Rerank) -> list[float] | RerankFailed:
        """The candidates' scores, or what stopped them (never raised: the search
        answers either way)."""
        assert self.reranker is not None
        try:
            scores = self.reranker.scores(request.query, request.documents)
        except RerankFailed as failed:
            return failed
        except ConfigurationError as err:  # a local reranker not added, say
            return RerankFailed(str(err))
        if len(scores) != len(request.documents):
            return RerankFailed(f"{len(scores)} scores for {len(request.documents)} texts")
        return scores

    def _neighbours(
        self, events: list[RecallItem], homes: list[str], context: int
    ) -> Generator[Searches, list[Body], list[tuple[list[RecallItem], list[RecallItem]]]]:
        """Each event's neighbours, looked for in `homes` (its index) first when that
        is a partition of the alias; anywhere in the alias when that finds too few."""
        if context == 0 or not events:
            return [([], []) for _ in events]
        looks: list[tuple[Body, str | None]] = []  # before, then after, for each event
        for event, home in zip(events, homes, strict=True):
            position = [event.timestamp.nanos, event.event_id, self._user_id]
            bodies = neighbour_bodies(self._user_id, event.session_id, position, context=context)
            # An index of another layout (the single-index one) is not a span of time.
            own = home if parse_partition(self._alias, home) is not None else None
            looks += [(body, own) for body in bodies]
        answers = yield Searches([body for body, _ in looks], [own for _, own in looks])
        found = [transport.hits(answer) for answer in answers]
        short = [
            i for i, hits in enumerate(found) if len(hits) < context and looks[i][1] is not None
        ]
        if short:
            wider = yield Searches([looks[i][0] for i in short])
            for i, answer in zip(short, wider, strict=True):
                found[i] = transport.hits(answer)
        items = [[_item(hit) for hit in hits] for hits in found]
        # The ones before come nearest first; a reader wants them in order.
        return [(items[i][::-1], items[i + 1]) for i in range(0, len(items), 2)]

    def _msearch(self, searches: "Searches") -> list[Body]:
        """Each search's answer, in one round trip. Sync/async twin of
        `AsyncMemorySearcher._amsearch`."""
        answers = transport.msearch(
            self._client,
            alias=self._alias,
            bodies=searches.bodies,
            indices=searches.indices,
            optional=searches.optional,
            routing=self._user_id,
            timeout=self._search_timeout,
        )
        return answers


# The plan yields its searches and, once, its reranking; it is sent their answers.
_Plan = Generator[Searches | Rerank, Any, MemorySearchResult]


def _drive(
    plan: _Plan,
    msearch: Callable[[Searches], list[Body]],
    rerank: Callable[[Rerank], list[float] | RerankFailed],
) -> MemorySearchResult:
    """Run `plan`, answering each of its `msearch`es with `msearch`, its reranking
    with `rerank`."""
    try:
        asked = next(plan)
        while True:
            asked = plan.send(msearch(asked) if isinstance(asked, Searches) else rerank(asked))
    except StopIteration as done:
        result: MemorySearchResult = done.value
        return result


class AsyncMemorySearcher(MemorySearcher):
    """`MemorySearcher` on the async client: `await searcher.search(...)`. The same
    plan, its requests awaited; the query's vector is computed in a worker thread, so
    a local model never blocks the event loop."""

    def __init__(self, client: AsyncElasticsearch, **options: Any) -> None:
        super().__init__(cast(Elasticsearch, None), **options)
        self._async_client = client

    async def search(  # type: ignore[override]
        self, query: str, **options: Any
    ) -> MemorySearchResult:
        """`MemorySearcher.search`'s arguments and answer."""
        return await self.answer(MemoryRequest.parse(query, **options))

    async def answer(self, request: MemoryRequest) -> MemorySearchResult:  # type: ignore[override]
        # Sync/async twin of `_drive`: the same loop over the plan, its requests awaited.
        vector, notice = await asyncio.to_thread(self._query_vector, request)
        plan = self._plan(request, vector, notice)
        try:
            asked = next(plan)
            while True:
                if isinstance(asked, Searches):
                    asked = plan.send(await self._amsearch(asked))
                else:  # a local cross-encoder, or an endpoint's call, off the event loop
                    asked = plan.send(await asyncio.to_thread(self._rerank, asked))
        except StopIteration as done:
            result: MemorySearchResult = done.value
            return result

    def _msearch(self, searches: Searches) -> list[Body]:
        raise TypeError("AsyncMemorySearcher has no sync client: await its search")

    async def _amsearch(self, searches: Searches) -> list[Body]:
        # Sync/async twin of `MemorySearcher._msearch`.
        answers = await transport.amsearch(
            self._async_client,
            alias=self._alias,
            bodies=searches.bodies,
            indices=searches.indices,
            optional=searches.optional,
            routing=self._user_id,
            timeout=self._search_timeout,
        )
        return answers


def _coverage_notice(model: str, mode: str, searched: Body, lacking: Body) -> str | None:
    """What the search could not see: the share of the events searched that lack the
    model's vectors (stored before it, or not enriched yet). Hybrid mode finds those by
    their words alone, semantic mode not at all; None when every event has them."""
    total, missing = _total(searched), _total(lacking)
    if not missing:
        return None
    todo = "the enrichment pass adds them (`session-recall embed`)"
    if mode == "semantic":
        found = "semantic mode cannot find them, hybrid mode finds them by their words"
    else:
        found = "those are found by their words alone"
    if missing >= total:
        if mode == "semantic":
            return f"No event searched has {model}'s vectors yet: {found}; {todo}."
        return (
            f"No event searched has {model}'s vectors yet, so the hits come from keywords "
            f"alone; {todo}."
        )
    share = f"{missing / total:.0%}" if missing * 100 >= total else "under 1%"
    return (
        f"{share} of the events searched ({missing:,} of {total:,}) lack {model}'s vectors "
        f"yet: {found}; {todo}."
    )


def _total(answer: Body) -> int:
    return int(answer.get("hits", {}).get("total", {}).get("value", 0))


def _item(hit: Body) -> RecallItem:
    source: dict[str, Any] = hit.get("_source", {})
    return RecallItem(
        session_id=source.get("session_id", ""),
        timestamp=Instant.parse(source["timestamp"]),
        type=source.get("type"),
        text=source.get("text", ""),
        event_id=source.get("event_id", ""),
        metadata=source.get("metadata"),
        payload=source.get("payload"),
    )
