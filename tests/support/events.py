"""Writing events straight into an alias, the way the indexer stores them.

Recall tests must not depend on the indexer being built in parallel, so they write
documents with the official client: routed by user_id, with `_id` a digest of the JSON
array [user_id, event_id], the timestamp in the fixed-width nanosecond form, into the
partition of the event's month (made from the alias's template on first write).
"""

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from elasticsearch import Elasticsearch, helpers

from session_recall.core.instant import Instant
from session_recall.core.partitions import DEFAULT_GRANULARITY, partition_of

Event = dict[str, Any]

_FIELDS = (
    "event_id",
    "user_id",
    "session_id",
    "contact_id",
    "inbox_id",
    "conversation_type",
    "type",
    "text",
)


def doc_id(user_id: str, event_id: str) -> str:
    text = json.dumps([user_id, event_id], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def event(
    event_id: str,
    *,
    user_id: str,
    session_id: str,
    text: str,
    timestamp: Instant | str,
    type: str = "user_message",
    **fields: str,
) -> Event:
    """One event document; `fields` adds contact_id, inbox_id, conversation_type."""
    at = timestamp if isinstance(timestamp, Instant) else Instant.parse(timestamp)
    unknown = set(fields) - set(_FIELDS)
    if unknown:
        raise ValueError(f"not event fields: {sorted(unknown)}")
    return {
        "event_id": event_id,
        "user_id": user_id,
        "session_id": session_id,
        "type": type,
        "text": text,
        "timestamp": at.to_elasticsearch(),
        **fields,
    }


def partition(alias: str, event: Event) -> str:
    """The index the writer stores `event` in, under the default layout."""
    return partition_of(alias, Instant.parse(event["timestamp"]), DEFAULT_GRANULARITY).index


def write_events(
    es: Elasticsearch, alias: str, events: Iterable[Event], *, refresh: bool = True
) -> int:
    """Index the events (replacing same ids), then refresh once; returns how many."""
    actions = (
        {
            "_op_type": "index",
            "_index": partition(alias, e),
            "_id": doc_id(e["user_id"], e["event_id"]),
            "_routing": e["user_id"],
            "_source": e,
        }
        for e in events
    )
    written, errors = helpers.bulk(es, actions, chunk_size=2000, max_chunk_bytes=10_000_000)
    assert not errors, errors
    if refresh:
        es.indices.refresh(index=alias)
    return written
