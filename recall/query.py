"""Pure builders: validated arguments in, Elasticsearch request bodies out.

Only `term`, `terms`, `range`, `exists` and `match_phrase` ever reach the engine. The user's text
goes into `match_phrase` as a value, so `user_id:bob`, `*`, `OR` or a quote are words
to look for, never syntax: no `query_string`, `simple_query_string`, `regexp` or
`wildcard` here.

Hits are sorted on fields, not on relevance, so Elasticsearch asks Lucene for no scores
at all: the phrases in `must` or `should` cost what they would in `filter`, and keep the
shape that makes `any` and `all` readable. `minimum_should_match: 1` matters: next to a
`filter`, `should` clauses would otherwise be optional.
"""

from dataclasses import dataclass
from typing import Any, NamedTuple

from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.recall.arguments import MatchMode
from session_recall.recall.text_match import phrase_clause

Body = dict[str, Any]

# Hits come in EVENT_ORDER (see session_recall.core.order): a total order, so
# search_after never skips or repeats.
SORT = event_order()
# The timestamp and event_id come back as sort values; the rest from _source. A search
# leaves the payload out (any JSON a producer stored, megabytes at times, which no
# search shows); a read (`READ_SOURCE`) asks for it.
SOURCE = ["session_id", "type", "text"]
READ_SOURCE = [*SOURCE, "payload"]


class SortPosition(NamedTuple):
    """Where a hit sits in the sort order: its sort values."""

    timestamp: int  # epoch nanoseconds, as Elasticsearch returns date_nanos sort values
    event_id: str
    user_id: str

    @classmethod
    def of(cls, hit: Body) -> "SortPosition":
        timestamp, event_id, user_id = hit["sort"]
        return cls(int(timestamp), str(event_id), str(user_id))


@dataclass(frozen=True)
class Criteria:
    """The validated query: its terms, how they combine, and the earliest instant.

    No terms at all: every event of the scope (reading a session, not searching it).
    """

    terms: tuple[str, ...]
    match: MatchMode = "any"
    since: Instant | None = None

    def key(self) -> list[Any]:
        return [list(self.terms), self.match, None if self.since is None else self.since.nanos]


def search_query(
    filters: list[Body],
    criteria: Criteria,
    *,
    as_of: Instant | None = None,
    after: SortPosition | None = None,
    resume_at: SortPosition | None = None,
    before: Instant | None = None,
) -> Body:
    """The bool query: scope and time in `filter`, one `match_phrase` per term (none:
    the filters alone).

    `after` keeps only hits past a position; `resume_at` is the position a
    `search_after` continues from. Either bounds the timestamp from below as well, in a
    plain `range`: Elasticsearch's pre-filter skips a partition (a shard) whose
    timestamps all fall outside a `range`, but reads neither `search_after` nor the
    `should` of `after_clause`, so without it a page deep in a long history would visit
    every partition. `before` keeps only hits stamped before it (a first page's window).
    """
    clauses = list(filters)
    bounds: dict[str, str] = {}
    starts = [criteria.since.nanos] if criteria.since is not None else []
    starts += [p.timestamp for p in (after, resume_at) if p is not None]
    if starts:
        bounds["gte"] = Instant(max(starts)).to_elasticsearch()
    if as_of is not None:
        bounds["lte"] = as_of.to_elasticsearch()
    if before is not None:
        bounds["lt"] = before.to_elasticsearch()
    if bounds:
        clauses.append({"range": {"timestamp": bounds}})
    if after is not None:
        clauses.append(after_clause(after))
    if not criteria.terms:
        return {"bool": {"filter": clauses}}
    phrases = [phrase_clause(term) for term in criteria.terms]
    if criteria.match == "all":
        return {"bool": {"filter": clauses, "must": phrases}}
    return {"bool": {"filter": clauses, "should": phrases, "minimum_should_match": 1}}


def after_clause(position: SortPosition) -> Body:
    """Hits strictly after `position` in SORT order, as a filter.

    The same as `search_after`, but usable together with `from`, which Elasticsearch
    refuses next to `search_after`: deep page numbers need both.
    """
    at = Instant(position.timestamp).to_elasticsearch()
    same_instant = {"range": {"timestamp": {"gte": at, "lte": at}}}
    later_event = [same_instant, {"range": {"event_id": {"gt": position.event_id}}}]
    later_user = [
        same_instant,
        {"term": {"event_id": position.event_id}},
        {"range": {"user_id": {"gt": position.user_id}}},
    ]
    return {
        "bool": {
            "should": [
                {"range": {"timestamp": {"gt": at}}},
                {"bool": {"filter": later_event}},
                {"bool": {"filter": later_user}},
            ],
            "minimum_should_match": 1,
        }
    }


def page_body(
    query: Body,
    *,
    size: int,
    offset: int = 0,
    search_after: SortPosition | None = None,
    source: list[str] | bool = SOURCE,
) -> Body:
    """One page of hits in chronological order. The total is never counted. `source`:
    the fields to fetch, or False for the hits' positions alone (a read's first step)."""
    body: Body = {
        "query": query,
        "sort": SORT,
        "track_total_hits": False,
        "_source": source,
        "size": size,
    }
    if offset:
        body["from"] = offset
    if search_after is not None:
        body["search_after"] = list(search_after)
    return body


def sources_body(filters: list[Body], ids: list[str], span: tuple[Instant, Instant]) -> Body:
    """The stored fields of the hits of `_id`s `ids` (a read's page, a part at a time),
    still pinned to the scope's `filters`, in SORT order. `span`, their first and last
    instant, lets Elasticsearch skip the partitions they are not in."""
    start, end = span
    instants = {"gte": start.to_elasticsearch(), "lte": end.to_elasticsearch()}
    clauses = [*filters, {"range": {"timestamp": instants}}, {"ids": {"values": ids}}]
    return {
        "query": {"bool": {"filter": clauses}},
        "sort": SORT,
        "track_total_hits": False,
        "_source": READ_SOURCE,
        "size": len(ids),
    }


def skip_body(query: Body, *, skip: int) -> Body:
    """Only the position of the `skip`-th hit: no source, one hit on the wire."""
    return {
        "query": query,
        "sort": SORT,
        "track_total_hits": False,
        "_source": False,
        "from": skip - 1,
        "size": 1,
    }


def latest_body(query: Body) -> Body:
    """The latest matching instant, which freezes a cursor chain (`as_of`).

    A `max` aggregation in a request of its own, sent beside the first page in one
    `msearch`: on a million events it costs under a millisecond, where a top hit sorted
    descending costs ten, and where the same aggregation inside the page request would
    stop the page's sort from skipping (about 9 ms). It reports date_nanos in whole
    milliseconds; see `latest_instant`.
    """
    return {
        "query": query,
        "size": 0,
        "track_total_hits": False,
        "aggs": {"latest": {"max": {"field": "timestamp"}}},
    }


def latest_instant(response: Body) -> Instant | None:
    """The end of the millisecond the latest match falls in, or None when none matched.

    Rounding up keeps every event of that millisecond inside the bound.
    """
    millis = response.get("aggregations", {}).get("latest", {}).get("value")
    if millis is None:
        return None
    return Instant(int(millis) * 1_000_000 + 999_999)
