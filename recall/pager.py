"""The engine every searcher shares: runs a scoped query a page at a time.

Two ways in, both pushed down to Elasticsearch:

- the first page and every cursor page: searched in growing windows of time from
  where the page starts (see `partition_map`), so a page does not visit every
  partition after its start in a long history, only those its hits are in.
- `page` numbers: `from`/`size` while the page fits in `index.max_result_window`;
  past it, hop through the sort order a window at a time, asking each hop for one hit
  (the position at its end) and no source. Page 1,100 of 10 costs two requests, never
  a fetch of everything, and never the engine's "result window is too large".
- `cursor`s: `search_after` from the position the previous page ended at, under the
  chain's frozen `as_of`, so the cost of a page does not grow with its depth.

Each page asks for one hit more than it returns: a next cursor is handed out only
when there is a next page.

A read (`whole`: every field, payload included) is bounded by bytes as well as by
count: events of 4 MB payloads made a page of ten a 40 MB answer, which on a shared
node tripped the parent circuit breaker, and every user of the node got 503s. So a
read asks first for its page's positions alone, then for the events' fields a few at a
time (one, then twice as many while the largest seen so far still fits in what is left
of `page_bytes`), and ends the page where the next event would not fit, its cursor
going on from there: no request and no page holds much more than `page_bytes`, and an
event larger than that comes alone. Page numbers count whole pages: a shortened page's
rest is reached by its cursor.

`as_of` is the instant of the latest match when the first page is served, not the wall
clock: events are stamped by the agents' clocks, and one running a second ahead of this
host would otherwise hide what the user just said from the last page of a search. It
comes with the first page: an aggregation sent beside it in one `msearch`, over the two
newest partitions and the last day (and anything stamped later), so Elasticsearch skips
every older partition and the cost does not grow with the history. A match in that
window is the latest match of all; only when there is none, and the page has a next
one, is it looked for further back, window by window from the newest partitions (see
`partition_map`). Two partitions, not one: the newest is often young or still empty
(the month just began; setup made it), and a look that finds nothing costs a round trip
more than the aggregation over one more partition does.
"""

import dataclasses
from typing import Any, Required, TypedDict, Unpack

import orjson
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.recall import transport
from session_recall.recall.cursor import CursorCodec, CursorState
from session_recall.recall.errors import ConflictingPagination, InvalidScope
from session_recall.recall.page import RecallItem, RecallPage
from session_recall.recall.partition_map import PartitionMap
from session_recall.recall.query import (
    SOURCE,
    Body,
    Criteria,
    SortPosition,
    latest_body,
    latest_instant,
    page_body,
    search_query,
    skip_body,
    sources_body,
)
from session_recall.recall.scope import SearchScope, binding

# The reference tools' page: enough to read in one go, little enough for a model's context.
DEFAULT_PAGE_SIZE = 10
# A page is read by a model or a person; a thousand events is past any useful page and
# keeps page_size + 1 well inside the result window.
MAX_PAGE_SIZE = 1000
# The bytes of a read's page (its events' stored fields), at most: a few of the largest
# events a producer may send, far below what trips a shared node's breakers.
DEFAULT_PAGE_BYTES = 8 * 1024 * 1024
# Elasticsearch's default `index.max_result_window`, which our index template keeps.
DEFAULT_MAX_RESULT_WINDOW = 10_000
# How far back the first page's look for the latest match reaches, at least: the last
# day, where an active user's latest match almost always is. It also reaches over the
# two newest partitions; only when neither holds a match are older partitions looked
# at (`_latest_further_back`).
RECENT_WINDOW_NS = 24 * 3600 * 10**9
_SORT_ONLY = "hits.hits.sort"


class PagerOptions(TypedDict, total=False):
    """What every searcher passes to its pager; the searchers take these keywords too."""

    alias: Required[str]
    cursor_key: Required[bytes]
    # Unset or None: DEFAULT_PAGE_SIZE.
    page_size: int | None
    # Unset or None: DEFAULT_MAX_RESULT_WINDOW. Pass the index's own setting if changed.
    max_result_window: int | None
    # Seconds Elasticsearch may spend on each search (its `timeout`); unset or None: no limit.
    search_timeout: float | None
    # The alias's partitions, shared by the searchers of one adapter; unset or None: the
    # pager reads its own.
    partitions: PartitionMap | None
    # The bytes of a read's page, at most (see the module's text); unset or None:
    # DEFAULT_PAGE_BYTES.
    page_bytes: int | None


def checked_page_size(page_size: int | None) -> int:
    """The page size to use: the default when unset, else one within the bounds."""
    page_size = DEFAULT_PAGE_SIZE if page_size is None else page_size
    if not isinstance(page_size, int) or not 1 <= page_size <= MAX_PAGE_SIZE:
        raise InvalidScope(
            f"page_size={page_size!r} is out of range.",
            hint=f"Use a page size from 1 to {MAX_PAGE_SIZE}.",
        )
    return page_size


class Pager:
    def __init__(self, client: Elasticsearch, **options: Unpack[PagerOptions]) -> None:
        alias, cursor_key = options["alias"], options["cursor_key"]
        page_size = checked_page_size(options.get("page_size"))
        max_result_window = options.get("max_result_window") or DEFAULT_MAX_RESULT_WINDOW
        if max_result_window <= page_size:
            raise InvalidScope(
                f"max_result_window={max_result_window} must exceed the page size.",
                hint="Pass the index's index.max_result_window setting.",
            )
        self._client = client
        self._alias = alias
        self.page_size = page_size
        self._window = max_result_window
        self._codec = CursorCodec(cursor_key)
        self.search_timeout = options.get("search_timeout")
        self._partitions = options.get("partitions") or PartitionMap(client, alias)
        page_bytes = options.get("page_bytes")
        self.page_bytes = DEFAULT_PAGE_BYTES if page_bytes is None else page_bytes
        if self.page_bytes < 1:
            raise InvalidScope(
                f"page_bytes={page_bytes!r} is out of range.", hint="Use a positive size."
            )

    def resume(
        self, cursor: str | None, *, scope_key: tuple[Any, ...], criteria: Criteria, page: int
    ) -> CursorState | None:
        """The state a cursor carries, checked against this scope and query.

        An empty cursor is no cursor: tool callers often send "" for an unset argument.
        """
        if cursor is None or not cursor.strip():
            return None
        if page > 0:
            raise ConflictingPagination(
                "Both a page number and a cursor were given.",
                hint="Pass the cursor alone to get the page after the previous one.",
            )
        return self._codec.decode(
            cursor,
            scope=binding(list(scope_key)),
            query=self._query_digest(criteria),
            page_size=self.page_size,
            searching=bool(criteria.terms),
        )

    def fetch(
        self,
        scope: SearchScope,
        criteria: Criteria,
        *,
        page: int = 0,
        state: CursorState | None = None,
        window_end: Instant | None = None,
        whole: bool = False,
    ) -> RecallPage:
        """A page of the scope's events matching `criteria`; `whole`: a read's, every
        field and bounded by bytes as well (see the module's text)."""
        filters, size = scope.filters(), self.page_size
        source: list[str] | bool = False if whole else SOURCE
        if state is None:
            response, latest = self._by_number(filters, criteria, scope.routing, page, source)
            as_of = latest_instant(latest)
        else:
            as_of = Instant(state.as_of)
            response, _ = self._windowed(
                filters, criteria, scope.routing, as_of=as_of, after=state.after, source=source
            )
        hits = transport.hits(response)
        kept, upto = (hits[:size], min(size, len(hits)))
        if whole:
            kept, upto = self._whole(filters, hits[:size], scope.routing)
        items = [item_of(hit) for hit in kept]
        if upto >= len(hits):
            return RecallPage(items=items)
        if as_of is None and state is None:
            as_of = self._latest_further_back(filters, criteria, scope.routing)
        if as_of is None:
            return RecallPage(items=items)
        next_state = CursorState(
            scope=binding(list(scope.key)),
            query=self._query_digest(criteria),
            page_size=self.page_size,
            as_of=as_of.nanos,
            after=SortPosition.of(hits[upto - 1]),
            window_end=None if window_end is None else window_end.nanos,
        )
        return RecallPage(items=items, next_cursor=self._codec.encode(next_state))

    def _whole(
        self, filters: list[Body], page: list[Body], routing: str | None
    ) -> tuple[list[Body], int]:
        """The events of `page` (hits without fields), with every field, as many as fit
        in `page_bytes` (one at least); and how many of `page`'s hits they take up (an
        event erased since its position was read is left out)."""
        found: list[Body] = []
        used = largest = taken = 0
        step = 1
        while taken < len(page):
            part = page[taken : taken + step]
            body = sources_body(filters, [hit["_id"] for hit in part], _span(part))
            answer = transport.hits(self._search(body, routing))
            fetched = {(h["_index"], h["_id"]): h for h in answer}
            for hit in part:
                event = fetched.get((hit["_index"], hit["_id"]))
                if event is None:  # erased meanwhile: nothing to show
                    taken += 1
                    continue
                size = len(orjson.dumps(event.get("_source", {})))
                if found and used + size > self.page_bytes:
                    return found, taken
                found.append(event)
                used, largest, taken = used + size, max(largest, size), taken + 1
            step = max(1, min(2 * step, (self.page_bytes - used) // max(largest, 1)))
        return found, taken

    def _query_digest(self, criteria: Criteria) -> str:
        return binding([criteria.key(), self.page_size])

    def _by_number(
        self,
        filters: list[Body],
        criteria: Criteria,
        routing: str | None,
        page: int,
        source: list[str] | bool = SOURCE,
    ) -> tuple[Body, Body]:
        """The response for page `page`, and the latest recent match's (page 0: window by
        window; any other page: one trip once its position is reached)."""
        size = self.page_size
        skip, after = page * size, None
        while skip + size + 1 > self._window:
            hop = min(skip, self._window)
            query = search_query(filters, criteria, after=after)
            response = self._search(skip_body(query, skip=hop), routing, filter_path=_SORT_ONLY)
            hits = transport.hits(response)
            if not hits:  # fewer matches than the page number needs
                return {}, {}
            after, skip = SortPosition.of(hits[0]), skip - hop
        if skip == 0 and after is None:
            return self._windowed(filters, criteria, routing, source=source)
        page_query = search_query(filters, criteria, after=after)
        body = page_body(page_query, size=size + 1, offset=skip, source=source)
        return self._with_latest(body, filters, criteria, routing)

    def _windowed(
        self,
        filters: list[Body],
        criteria: Criteria,
        routing: str | None,
        *,
        as_of: Instant | None = None,
        after: SortPosition | None = None,
        source: list[str] | bool = SOURCE,
    ) -> tuple[Body, Body]:
        """A page from its start (`since`, the cursor's position, or the oldest match)
        on, window by window (see `partition_map`): each window starts where the last
        one ended, so their hits, put end to end, are in order. A first page (no
        cursor) comes with the latest recent match, in the first window's trip."""
        wanted = self.page_size + 1
        found: list[Body] = []
        latest: Body = {}
        with_latest = after is None
        resumed = None if after is None else Instant(after.timestamp)
        starts = [i for i in (criteria.since, resumed) if i is not None]
        start = max(starts) if starts else None
        ends = self._partitions.window_ends(start)
        if as_of is not None:  # past `as_of` there is nothing to read
            ends = [end for end in ends if end <= as_of]
        for end in [*ends, None]:
            windowed = dataclasses.replace(criteria, since=start)
            query = search_query(filters, windowed, as_of=as_of, resume_at=after, before=end)
            body = page_body(query, size=wanted - len(found), search_after=after, source=source)
            if with_latest:  # a first page's first trip
                response, latest = self._with_latest(body, filters, criteria, routing)
                with_latest = False
            else:
                response = self._search(body, routing)
            found += transport.hits(response)
            if len(found) >= wanted:
                break
            start = end
        return {"hits": {"hits": found}}, latest

    def _latest_further_back(
        self, filters: list[Body], criteria: Criteria, routing: str | None
    ) -> Instant | None:
        """The latest match, from the newest partitions back: the first window holding
        a match holds the latest (each window reaches to the end of time). A window the
        first page's look covered (the newest partitions', the last day's) is not sent
        again."""
        covered = self._first_look_start(criteria)
        starts = [s for s in self._partitions.window_starts(criteria.since) if s < covered]
        for start in [*starts, None]:
            windowed = criteria if start is None else dataclasses.replace(criteria, since=start)
            body = latest_body(search_query(filters, windowed))
            found = latest_instant(self._search(body, routing))
            if found is not None:
                return found
        return None

    def _with_latest(
        self, body: Body, filters: list[Body], criteria: Criteria, routing: str | None
    ) -> tuple[Body, Body]:
        """The page's response, and the latest recent match's (one trip)."""
        recent = _since(criteria, self._first_look_start(criteria))
        response, latest = transport.msearch(
            self._client,
            alias=self._alias,
            bodies=[body, latest_body(search_query(filters, recent))],
            routing=routing,
            timeout=self.search_timeout,
        )
        return response, latest

    def _first_look_start(self, criteria: Criteria) -> Instant:
        """Where the first page's look for the latest match starts: a day ago, or the
        start of the two newest partitions (the second look-back window) when earlier."""
        windows = self._partitions.window_starts(criteria.since)[:2]
        return min([_recent_start(), *windows[-1:]])

    def _search(self, body: Body, routing: str | None, filter_path: str | None = None) -> Body:
        return transport.search(
            self._client,
            alias=self._alias,
            body=body,
            routing=routing,
            filter_path=filter_path,
            timeout=self.search_timeout,
        )


def _span(hits: list[Body]) -> tuple[Instant, Instant]:
    """The first and last instant of hits in SORT order."""
    return Instant(SortPosition.of(hits[0]).timestamp), Instant(SortPosition.of(hits[-1]).timestamp)


def _recent_start() -> Instant:
    """Where the look for a recent match starts: a day ago."""
    return Instant(Instant.now().nanos - RECENT_WINDOW_NS)


def _since(criteria: Criteria, start: Instant) -> Criteria:
    """The same query from `start` on (`since`, when later, is kept)."""
    since = criteria.since
    return dataclasses.replace(criteria, since=start if since is None else max(since, start))


def item_of(hit: Body) -> RecallItem:
    """The event of a hit sorted in SORT order (its timestamp and id are sort values)."""
    source = hit.get("_source", {})
    position = SortPosition.of(hit)
    return RecallItem(
        session_id=source.get("session_id", ""),
        timestamp=Instant(position.timestamp),
        type=source.get("type"),
        text=source.get("text", ""),
        event_id=position.event_id,
        payload=source.get("payload"),
    )
