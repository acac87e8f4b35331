"""Which of a contact's conversations count as recent: one aggregation over the window.

Conversations are chat ones of the user's contact in the inbox with a message in the
lookback window, that is, whose last message falls in it. A `terms` aggregation on
session_id, ordered by its `max(timestamp)`, keeps the most recently active. Ordering
by `max` descending is exact even over several indices: a conversation's latest
message sits in one shard, where everything more recent ranks above it too. Ties at the same
millisecond (what `max` on date_nanos reports) go to the smaller session_id.
"""

from typing import Any

from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.core.user_filter import user_filter
from session_recall.recall import transport
from session_recall.recall.query import Body

_NANOS_PER_DAY = 86_400 * 1_000_000_000


def window_start(window_end: Instant, lookback_days: int) -> Instant:
    return Instant(max(0, window_end.nanos - lookback_days * _NANOS_PER_DAY))


def recent_conversations_body(
    *,
    user_id: str,
    contact_id: str,
    inbox_id: str,
    start: Instant,
    end: Instant,
    limit: int,
) -> Body:
    filters: list[Body] = [
        *user_filter(user_id, contact_id=contact_id, inbox_id=inbox_id),
        {"term": {"conversation_type": "chat"}},
    ]
    bounds = {"gte": start.to_elasticsearch(), "lte": end.to_elasticsearch()}
    filters.append({"range": {"timestamp": bounds}})
    return {
        "size": 0,
        "track_total_hits": False,
        "query": {"bool": {"filter": filters}},
        "aggs": {
            "conversations": {
                "terms": {
                    "field": "session_id",
                    "size": limit,
                    "order": [{"last_message": "desc"}, {"_key": "asc"}],
                },
                "aggs": {"last_message": {"max": {"field": "timestamp"}}},
            }
        },
    }


def conversations_clause(current_session_id: str | None, recent: list[str]) -> Body:
    """The current conversation, whatever its type, or one of the recent chat ones.

    The chat condition is repeated here, not left to the aggregation: the aggregation
    only names session ids, and events of the same id that are not chat ones must stay
    out. With neither, the clause matches nothing.
    """
    either: list[Body] = []
    if current_session_id is not None:
        either.append({"term": {"session_id": current_session_id}})
    if recent:
        either.append(
            {
                "bool": {
                    "filter": [
                        {"terms": {"session_id": sorted(recent)}},
                        {"term": {"conversation_type": "chat"}},
                    ]
                }
            }
        )
    if not either:
        return {"bool": {"must_not": [{"match_all": {}}]}}
    if len(either) == 1:
        return either[0]
    return {"bool": {"should": either, "minimum_should_match": 1}}


def recent_conversations(
    client: Elasticsearch,
    *,
    alias: str,
    body: Body,
    routing: str,
    timeout: float | None = None,
) -> list[str]:
    """The session ids the aggregation found, most recently active first."""
    response = transport.search(client, alias=alias, body=body, routing=routing, timeout=timeout)
    buckets: list[dict[str, Any]] = (
        response.get("aggregations", {}).get("conversations", {}).get("buckets", [])
    )
    return [str(bucket["key"]) for bucket in buckets]
