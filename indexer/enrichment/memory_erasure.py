"""Erasure takes kept memories with their sources.

Every removal of events (an erasure of any scope, `pop_item`, ADK's `delete_memory`)
goes through `erasure.forgetting`, which calls `remove_with_sources` with the removed
events' `_id`s once they are gone: each memory with one of them among its sources is
deleted, and the memories index refreshed, so once the erasure returns no erased word
is in any memory. A prune by time drops whole partitions, whose ids it never reads:
`remove_sourced_before` deletes the memories whose earliest source is older than the
boundary. If a memory had other sources that survive, the miner may derive it again
from those.
"""

from collections.abc import Collection
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from session_recall.core.index_names import memory_index
from session_recall.core.instant import Instant
from session_recall.core.user_filter import user_filter
from session_recall.indexer.errors import ErasureIncomplete

# Ids per lookup: an erasure's page is at most a thousand events.
_CHUNK = 1000
_PAGE = 1000


def remove_with_sources(
    client: Elasticsearch, alias: str, user_id: str, ids: Collection[str]
) -> int:
    """Delete `user_id`'s memories with a source among the events `ids` (`_id`s);
    how many were deleted."""
    wanted = sorted(ids)
    removed = 0
    for start in range(0, len(wanted), _CHUNK):
        query = {
            "bool": {
                "filter": [
                    *user_filter(user_id),
                    {"terms": {"source_ids": wanted[start : start + _CHUNK]}},
                ]
            }
        }
        removed += _delete_matching(client, alias, query, routing=user_id)
    return removed


def remove_sourced_before(client: Elasticsearch, alias: str, before: Instant) -> int:
    """Delete every memory (of any user) with a source stamped before `before`: what a
    prune of the partitions ending by then removed."""
    query = {"range": {"sources_since": {"lt": before.to_elasticsearch()}}}
    return _delete_matching(client, alias, query, routing=None)


def _delete_matching(
    client: Elasticsearch, alias: str, query: dict[str, Any], *, routing: str | None
) -> int:
    index = memory_index(alias)
    removed = 0
    try:
        client.indices.refresh(index=index)  # a memory saved a moment ago is found too
    except NotFoundError:
        return 0  # no memory was ever kept on this alias
    while True:
        hits = client.search(
            index=index,
            routing=routing,
            query=query,
            size=_PAGE,
            source=False,
            track_total_hits=False,
        ).body["hits"]["hits"]
        if not hits:
            return removed
        operations: list[dict[str, Any]] = [
            {"delete": {"_index": index, "_id": hit["_id"], "routing": hit["_routing"]}}
            for hit in hits
        ]
        answer = client.bulk(operations=operations, refresh=True).body
        removed += sum(1 for item in answer["items"] if item["delete"].get("result") == "deleted")
        failed = [item for item in answer["items"] if item["delete"].get("status", 200) >= 300]
        if any(item["delete"].get("status") != 404 for item in failed):
            raise ErasureIncomplete(
                f"{len(failed)} memory(ies) with an erased source could not be deleted.",
                hint="Run the same delete again: it removes them.",
            )


__all__ = ["remove_sourced_before", "remove_with_sources"]
