"""The reference's cross-session recall, done the way it does it: on the client.

spring-ai-session's `CrossSessionRecallTools.crossSessionSearch`:

1. `sessionService.findByUserId(userId)`: every session of the user;
2. for each session, `sessionService.getEvents(sessionId, filter)`: all of the session's
   events that match the keywords (and `since`), with no page bound;
3. keep the events that have text, sort them all by their `Instant`, slice the page.

Its cost grows with the user's history whatever page is asked for. Here it runs
against the same Elasticsearch node and documents as our engine, so the comparison is
about the algorithm alone: the session list is a routed composite aggregation, and each
session's matches come a thousand at a time through `search_after` until none is left.
The keyword filter is our engine's (one `match_phrase` per term, any or all), not the
reference's substring `LIKE`, so both return the same events for the same query.
"""

from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant

MAX_QUERY_TERMS = 20  # CrossSessionRecallTools.MAX_QUERY_TERMS
# Events per request while reading a session: a JDBC driver's fetch size, or a repository
# page. Large enough that a 100-event session is one request.
FETCH_SIZE = 1000
# Sessions per composite-aggregation page while listing the user's sessions.
SESSIONS_PER_REQUEST = 1000
_SORT = [{"timestamp": "asc"}, {"event_id": "asc"}]
_SOURCE = ["session_id", "timestamp", "type", "text", "event_id"]


@dataclass(frozen=True)
class ReferenceItem:
    session_id: str
    timestamp: Instant
    type: str | None
    text: str
    event_id: str


@dataclass(frozen=True)
class ReferencePage:
    """The page, and what it cost: requests sent and events brought to the client."""

    items: list[ReferenceItem]
    sessions: int
    fetched: int
    requests: int


def parse_terms(query: str) -> list[str]:
    """The reference's `buildFilter`: split on commas, trim, drop blanks, at most 20."""
    terms = [term.strip() for term in query.split(",") if term.strip()]
    if not terms:
        raise ValueError(f"query {query!r} contained no usable search terms")
    if len(terms) > MAX_QUERY_TERMS:
        raise ValueError(f"query supplied {len(terms)} terms; the maximum is {MAX_QUERY_TERMS}")
    return terms


class ReferenceCrossSessionRecall:
    """`crossSessionSearch` for one user, bound at construction as in the reference."""

    def __init__(
        self, client: Elasticsearch, *, alias: str, user_id: str, page_size: int = 10
    ) -> None:
        self._client = client
        self._alias = alias
        self._user_id = user_id
        self.page_size = page_size

    def search(
        self, query: str, *, match: str = "any", since: Instant | None = None, page: int = 0
    ) -> ReferencePage:
        terms = parse_terms(query)
        sessions, requests = self._sessions()
        matches: list[ReferenceItem] = []
        for session_id in sessions:
            found, sent = self._session_matches(session_id, terms, match, since)
            requests += sent
            matches.extend(item for item in found if item.text.strip())
        # The reference sorts by the Instant, not its text (their lengths vary).
        matches.sort(key=lambda item: item.timestamp)
        start = max(0, page) * self.page_size
        return ReferencePage(
            items=matches[start : start + self.page_size],
            sessions=len(sessions),
            fetched=len(matches),
            requests=requests,
        )

    def _sessions(self) -> tuple[list[str], int]:
        """`findByUserId`: every session id of the user, whatever the query."""
        sessions: list[str] = []
        after: dict[str, Any] | None = None
        requests = 0
        while True:
            composite: dict[str, Any] = {
                "size": SESSIONS_PER_REQUEST,
                "sources": [{"session_id": {"terms": {"field": "session_id"}}}],
            }
            if after is not None:
                composite["after"] = after
            response = self._client.search(
                index=self._alias,
                routing=self._user_id,
                size=0,
                track_total_hits=False,
                query={"bool": {"filter": [{"term": {"user_id": self._user_id}}]}},
                aggs={"sessions": {"composite": composite}},
            )
            requests += 1
            result = response.body["aggregations"]["sessions"]
            sessions.extend(bucket["key"]["session_id"] for bucket in result["buckets"])
            after = result.get("after_key")
            if after is None or len(result["buckets"]) < SESSIONS_PER_REQUEST:
                return sessions, requests

    def _session_matches(
        self, session_id: str, terms: list[str], match: str, since: Instant | None
    ) -> tuple[list[ReferenceItem], int]:
        """`getEvents(sessionId, filter)`: all of one session's matches, in order."""
        filters: list[dict[str, Any]] = [
            {"term": {"user_id": self._user_id}},
            {"term": {"session_id": session_id}},
        ]
        if since is not None:
            filters.append({"range": {"timestamp": {"gte": since.to_elasticsearch()}}})
        phrases = [{"match_phrase": {"text": {"query": term}}} for term in terms]
        query: dict[str, Any]
        if match == "all":
            query = {"bool": {"filter": filters, "must": phrases}}
        else:
            query = {"bool": {"filter": filters, "should": phrases, "minimum_should_match": 1}}
        items: list[ReferenceItem] = []
        after: list[Any] | None = None
        requests = 0
        while True:
            response = self._client.search(
                index=self._alias,
                routing=self._user_id,
                query=query,
                sort=_SORT,
                size=FETCH_SIZE,
                track_total_hits=False,
                source_includes=_SOURCE,
                search_after=after,
            )
            requests += 1
            hits = response.body["hits"]["hits"]
            items.extend(_item(hit["_source"]) for hit in hits)
            if len(hits) < FETCH_SIZE:
                return items, requests
            after = hits[-1]["sort"]


def _item(source: dict[str, Any]) -> ReferenceItem:
    return ReferenceItem(
        session_id=source["session_id"],
        timestamp=Instant.parse(source["timestamp"]),
        type=source.get("type"),
        text=source.get("text") or "",
        event_id=source["event_id"],
    )
