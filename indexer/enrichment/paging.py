"""Pages of events in the event order, as every reader of the enrichment (and erasure)
walks them: `search_after`, no total, and never a page missing a shard, which would
look like the last one."""

from collections.abc import Iterable
from typing import Any

from elasticsearch import Elasticsearch

from session_recall.core.order import event_order

Hit = dict[str, Any]


def search_page(
    client: Elasticsearch,
    alias: str,
    query: dict[str, Any],
    *,
    size: int,
    after: list[Any] | None,
    routing: str | None = None,
    source: bool | list[str] | dict[str, Any] = False,
    versions: bool = False,
) -> list[Hit]:
    """The `size` events matching `query` after `after` in the event order, with the
    `source` asked for (ids and routing only by default) and, with `versions`, the
    version each was read at (for a conditional write)."""
    fields: dict[str, Any] = (
        {"source_includes": source} if isinstance(source, list) else {"source": source}
    )
    response = client.search(
        index=alias,
        routing=routing,
        query=query,
        sort=event_order(),
        size=size,
        track_total_hits=False,
        search_after=after,
        seq_no_primary_term=True if versions else None,
        allow_partial_search_results=False,
        **fields,
    )
    hits: list[Hit] = response.body["hits"]["hits"]
    return hits


def search_all(
    client: Elasticsearch,
    alias: str,
    query: dict[str, Any],
    *,
    routing: str | None,
    size: int = 1000,
) -> Iterable[Hit]:
    """Every event matching `query`, in the event order, ids and routing only."""
    after: list[Any] | None = None
    while True:
        hits = search_page(client, alias, query, routing=routing, size=size, after=after)
        yield from hits
        if len(hits) < size:
            return
        after = hits[-1]["sort"]
