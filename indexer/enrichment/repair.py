"""Keeping contexts true: the conditional writes of contexts, checked against removals
noted meanwhile, and the repairs that erasure and `prune` call once turns are gone.

A removal notes itself (`tombstones.removals_seen` counts the notes), then looks for
the contexts holding what it removed: a context written before its note is found by
it; one written after, by a writer that read before it, is checked here, in real time.
"""

from collections.abc import Collection, Iterable, Sequence
from typing import Any

import orjson
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.indexer import bulk, tombstones
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.enrichment.context_rule import (
    CONTEXT_OF_FIELD,
    CONTEXT_SINCE_FIELD,
    Hit,
    Key,
    context_fields,
    key,
    listed,
    turn_terms,
)
from session_recall.indexer.enrichment.paging import search_all
from session_recall.indexer.enrichment.turns import gone, read_enriched, turns_before
from session_recall.indexer.errors import IndexerError
from session_recall.indexer.retry import RetryPolicy

# A repair whose write met a newer version reads again and retries, this many times:
# each conflict is another writer's newer write, and two in a row are rare.
_REPAIR_ATTEMPTS = 5
# Ids per terms query when looking for the turns whose context holds erased events.
_TERMS_PER_QUERY = 1_000


def update(hit: Hit, doc: dict[str, Any]) -> bulk.Action:
    """A bulk `update` of `hit` with `doc`, routed like the event. Conditional on the
    version `hit` was read at (`_seq_no`, `_primary_term`), when it has one: a newer
    write (another enricher's, an erasure's repair) is never overwritten with an older
    view; the conflict leaves the event to be done again from what is there now."""
    target: dict[str, Any] = {"_index": hit["_index"], "_id": hit["_id"]}
    if hit.get("_routing") is not None:
        target["routing"] = hit["_routing"]
    if "_seq_no" in hit:
        target["if_seq_no"] = hit["_seq_no"]
        target["if_primary_term"] = hit["_primary_term"]
    body = orjson.dumps({"doc": doc}, option=orjson.OPT_SERIALIZE_NUMPY)
    return {"update": target}, body


def write_checked(
    client: Elasticsearch,
    alias: str,
    updates: Sequence[tuple[bulk.Action, list[Hit]]],
    *,
    seen: int,
    policy: RetryPolicy,
    stats: BulkStats,
) -> tuple[list[bulk.ItemResponse], set[str]]:
    """Send context updates, each with the turns its context holds, read after the
    removals counter showed `seen` (`tombstones.removals_seen`); the answers, and the
    `_id`s of the turns that were removed since (none, when no removal was noted
    meanwhile)."""
    responses = bulk.send(client, [action for action, _ in updates], policy=policy, stats=stats)
    held = [
        turn
        for (_, turns), response in zip(updates, responses, strict=True)
        if 200 <= response.status < 300
        for turn in turns
    ]
    if not held or tombstones.removals_seen(client, alias) == seen:
        return responses, set()
    return responses, gone(client, held)


def repair(
    client: Elasticsearch,
    alias: str,
    targets: Iterable[tuple[Key, str]],
    *,
    exclude: Collection[str] = (),
    policy: RetryPolicy,
    stats: BulkStats | None = None,
) -> int:
    """Rebuild the context of each enriched event of `targets` ((key, routing) pairs)
    from the turns stored before it now, leaving out the `_id`s of `exclude` (removed,
    though a search may still see them). Each write is conditional on the version just
    read, and checked against removals noted meanwhile (`write_checked`); one that met
    a newer write, or holds a turn removed meanwhile, is read and done again. Returns
    how many were rewritten; an event gone or not enriched yet is left alone (the pass
    that enriches it reads what is there then)."""
    pending = dict(targets)
    excluded = set(exclude)
    rewritten = 0
    for _ in range(_REPAIR_ATTEMPTS):
        if not pending:
            return rewritten
        seen = tombstones.removals_seen(client, alias)
        current = read_enriched(client, pending)
        updates: list[tuple[bulk.Action, list[Hit]]] = []
        changed: list[Hit] = []
        for hit, turns in zip(
            current, turns_before(client, alias, current, exclude=excluded), strict=True
        ):
            doc = context_fields([*turns, hit], turn_terms([*turns, hit]), len(turns))
            if listed(hit, CONTEXT_OF_FIELD) != doc[CONTEXT_OF_FIELD]:  # else true already
                changed.append(hit)
                updates.append((update(hit, doc), turns))
        responses, removed = write_checked(
            client, alias, updates, seen=seen, policy=policy, stats=stats or BulkStats()
        )
        excluded |= removed
        retry: dict[Key, str] = {}
        for hit, (_, turns), response in zip(changed, updates, responses, strict=True):
            holds_removed = any(str(turn["_id"]) in removed for turn in turns)
            if 200 <= response.status < 300:
                rewritten += 1
            elif response.status not in (404, 409):
                raise IndexerError(f"Rebuilding a context failed: {response.error}.")
            if response.status == 409 or holds_removed:
                retry[key(hit)] = pending[key(hit)]
        pending = retry
    raise IndexerError(
        f"{len(pending)} context(s) kept changing while being rebuilt.",
        hint="Run the same command again.",
    )


def repair_erased(
    client: Elasticsearch,
    alias: str,
    routing: str | None,
    erased: Collection[str],
    *,
    kept_out: dict[str, Any] | None = None,
    policy: RetryPolicy,
) -> int:
    """Rebuild, without them, the context of every event that holds one of the
    `erased` `_id`s, once the alias was refreshed after their removal. `kept_out`:
    a query for events about to be erased too, whose contexts need no rebuilding."""
    ids = sorted(erased)
    targets: dict[Key, str] = {}
    for start in range(0, len(ids), _TERMS_PER_QUERY):
        chunk = ids[start : start + _TERMS_PER_QUERY]
        query: dict[str, Any] = {"bool": {"filter": [{"terms": {CONTEXT_OF_FIELD: chunk}}]}}
        if kept_out is not None:
            query["bool"]["must_not"] = [kept_out]
        for hit in search_all(client, alias, query, routing=routing):
            targets[key(hit)] = str(hit["_routing"])
    if not targets:
        return 0
    return repair(client, alias, targets.items(), exclude=erased, policy=policy)


def repair_reaching_before(
    client: Elasticsearch, alias: str, boundary: Instant, *, policy: RetryPolicy
) -> int:
    """Rebuild the contexts of the events from `boundary` on that hold turns from
    before it: after `prune` removed every partition that ends by `boundary` (and
    noted it: `erasure.note_removal`), they hold turns that are gone. Found from the
    boundary alone, so running it again after a prune that stopped half-way finds
    them still."""
    since = {"range": {CONTEXT_SINCE_FIELD: {"lt": boundary.to_elasticsearch()}}}
    stamped = {"range": {"timestamp": {"gte": boundary.to_elasticsearch()}}}
    query = {"bool": {"filter": [since, stamped]}}
    targets = {
        key(hit): str(hit["_routing"]) for hit in search_all(client, alias, query, routing=None)
    }
    return repair(client, alias, targets.items(), policy=policy)
