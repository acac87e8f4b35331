"""The context rule: what an event's `context` holds, and how it is kept true.

An event's **context** is the stems of its own text and of the `CONTEXT_REACH` turns
just before it in its session (each cut to its first `_NEIGHBOUR_TERMS` stems): what the
conversation was about when it was said. Only turns before it: when events arrive in
order, an event's context is complete the first time it is enriched, so the enrichment
pass writes each event once after it is stored, and a later turn never rewrites an
earlier one. (Three turns before find as much on LoCoMo as the two on each side of the
rule before: BENCHMARKS.md.) A turn stored late, between turns already enriched, makes
the pass rewrite the up to `CONTEXT_REACH` turns after it (`followers`).

Two fields record where a context came from, so that it can be kept true:

- `context_of`: the `_id`s of the turns before it whose stems it holds. An erased
  event's words would otherwise live on in the turns after it; those are found by this
  field and rebuilt without it (`repair_erased`).
- `context_since`: the instant of the earliest of those turns, so that the turns whose
  context reaches into a period that `prune` removes are found by a range.
"""

from collections.abc import Collection, Iterable, Sequence
from typing import Any

import orjson
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.core.stems import stems
from session_recall.core.user_filter import user_filter
from session_recall.indexer import bulk, tombstones
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.errors import IndexerError
from session_recall.indexer.retry import RetryPolicy

# The context rule's version: a new rule gets a new mark, and the pass redoes every event.
CONTEXT_MARK = "context-2"
ENRICHED_FIELD = "enriched"
STEMS_FIELD = "stems"
CONTEXT_FIELD = "context"
CONTEXT_OF_FIELD = "context_of"
CONTEXT_SINCE_FIELD = "context_since"
# The turns before an event that its context holds.
CONTEXT_REACH = 3
# What one earlier turn adds to a context, at most: a tool's long output is a turn too,
# and its first words say what it is about.
_NEIGHBOUR_TERMS = 200
# The turns of one session read between a page's first and last event of it.
_SPAN = 10_000
# A repair whose write met a newer version reads again and retries, this many times:
# each conflict is another writer's newer write, and two in a row are rare.
_REPAIR_ATTEMPTS = 5
# Ids per terms query when looking for the turns whose context holds erased events.
_TERMS_PER_QUERY = 1_000
_TURN_SOURCE = ["text", "user_id", "session_id", "timestamp", "event_id"]
# A turn's per-document error in a real-time read when its partition was pruned.
_NO_INDEX = "index_not_found_exception"

Hit = dict[str, Any]
Key = tuple[str, str]  # (_index, _id): a stored event across the alias


def key(hit: Hit) -> Key:
    return (str(hit["_index"]), str(hit["_id"]))


def listed(hit: Hit, field: str) -> list[str]:
    value = hit.get("_source", {}).get(field) or []
    return [value] if isinstance(value, str) else list(value)


def is_enriched(hit: Hit) -> bool:
    return CONTEXT_MARK in listed(hit, ENRICHED_FIELD)


def context_fields(turns: Sequence[Hit], terms: Sequence[str], i: int) -> dict[str, Any]:
    """The context of `turns[i]` from the turns before it (`terms`: each turn's stems)."""
    start = max(i - CONTEXT_REACH, 0)
    before = [_head(t) for t in terms[start:i]]
    fields: dict[str, Any] = {
        CONTEXT_FIELD: " ".join(part for part in [*before, terms[i]] if part),
        CONTEXT_OF_FIELD: [str(turn["_id"]) for turn in turns[start:i]],
    }
    fields[CONTEXT_SINCE_FIELD] = turns[start]["_source"]["timestamp"] if start < i else None
    return fields


def _head(terms: str) -> str:
    return " ".join(terms.split(" ", _NEIGHBOUR_TERMS)[:_NEIGHBOUR_TERMS])


def turn_terms(turns: Sequence[Hit]) -> list[str]:
    return [stems(turn["_source"].get("text", "")) for turn in turns]


def position(source: dict[str, Any]) -> list[Any]:
    """An event's sort values in the event order, from its stored fields."""
    return [Instant.parse(source["timestamp"]).nanos, source["event_id"], source["user_id"]]


def read_windows(
    client: Elasticsearch, alias: str, hits: Sequence[Hit]
) -> dict[tuple[str, str], list[Hit]]:
    """Each session of `hits` (events in the event order, with `sort`): its turns in
    order, from `CONTEXT_REACH` before its first hit to as many past its last, in one
    `msearch`. Between its first hit and its last, only the turns enriched before are
    read: the others are `hits` (a turn stored since `hits` were found is not there
    yet, and reaches the turns after it when it is enriched in its turn: `followers`)."""
    spans: dict[tuple[str, str], list[Hit]] = {}
    for hit in hits:
        source = hit["_source"]
        spans.setdefault((source["user_id"], source["session_id"]), []).append(hit)
    searches: list[dict[str, Any]] = []
    looks: list[int] = []  # how many searches each session has
    for (user, session), mine in spans.items():
        scope = _session_filter(user, session)
        first, last = mine[0]["sort"], mine[-1]["sort"]
        searches += _look(alias, user, scope, before=first, size=CONTEXT_REACH)
        searches += _look(alias, user, scope, after_=last, size=CONTEXT_REACH)
        if len(mine) > 1:  # turns between its hits: with one hit, there are none
            bounds = {
                "gte": Instant(first[0]).to_elasticsearch(),
                "lte": Instant(last[0]).to_elasticsearch(),
            }
            span = [{"range": {"timestamp": bounds}}, {"term": {ENRICHED_FIELD: CONTEXT_MARK}}]
            searches += [
                _head_line(alias, user),
                {**_common(), "query": {"bool": {"filter": [*scope, *span]}},
                 "sort": event_order(), "size": _SPAN},
            ]  # fmt: skip
        looks.append(len(searches) // 2 - sum(looks))
    answers = iter(_msearch(client, searches))
    windows: dict[tuple[str, str], list[Hit]] = {}
    for count, (session_key, mine) in zip(looks, spans.items(), strict=True):
        found = {key(turn): turn for turn in mine}
        for _ in range(count):
            found.update((key(turn), turn) for turn in next(answers))
        windows[session_key] = sorted(found.values(), key=lambda turn: turn["sort"])
    return windows


def followers(turns: Sequence[Hit], mine: Collection[Key]) -> list[int]:
    """The turns (by position) not among `mine` whose context holds one of `mine`:
    those that a turn stored late must reach."""
    return [
        i
        for i, turn in enumerate(turns)
        if key(turn) not in mine
        and any(key(t) in mine for t in turns[max(i - CONTEXT_REACH, 0) : i])
    ]


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


def gone(client: Elasticsearch, turns: Iterable[Hit]) -> set[str]:
    """The `_id`s of `turns` no longer stored, read in real time: removed since they
    were read (their partition too, by `prune`)."""
    wanted = {
        str(turn["_id"]): {
            "_index": turn["_index"],
            "_id": turn["_id"],
            "routing": turn["_routing"],
        }
        for turn in turns
    }
    if not wanted:
        return set()
    response = client.mget(docs=list(wanted.values()), source=False, realtime=True)
    missing = set()
    for doc in response.body.get("docs", ()):
        if doc.get("found"):
            continue
        error = doc.get("error")
        if error and (error.get("type") if isinstance(error, dict) else None) != _NO_INDEX:
            raise IndexerError(f"Reading turns in real time failed: {error}.")
        missing.add(str(doc["_id"]))
    return missing


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
    meanwhile). A removal notes itself, then looks for the contexts holding what it
    removed: a context written before its note is found by it; one written after, by
    a writer that read before it, is checked here, in real time."""
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
            current, _before(client, alias, current, exclude=excluded), strict=True
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


def search_page(
    client: Elasticsearch,
    alias: str,
    query: dict[str, Any],
    *,
    routing: str | None,
    size: int,
    after: list[Any] | None,
) -> list[Hit]:
    """The `size` events matching `query` after `after` in the event order, ids and
    routing only; never a page missing a shard, which would look like the last."""
    response = client.search(
        index=alias,
        routing=routing,
        query=query,
        sort=event_order(),
        size=size,
        source=False,
        track_total_hits=False,
        search_after=after,
        allow_partial_search_results=False,
    )
    hits: list[Hit] = response.body["hits"]["hits"]
    return hits


def read_enriched(client: Elasticsearch, targets: dict[Key, str]) -> list[Hit]:
    """The enriched ones of `targets` as stored now (real time), with their versions."""
    docs = [{"_index": i, "_id": d, "routing": r} for (i, d), r in targets.items()]
    response = client.mget(
        docs=docs, source_includes=[*_TURN_SOURCE, ENRICHED_FIELD, CONTEXT_OF_FIELD], realtime=True
    )
    found = []
    for doc, (_, routing) in zip(response.body["docs"], targets.items(), strict=True):
        if "error" in doc:
            raise IndexerError(f"Reading an event in real time failed: {doc['error']}.")
        if doc.get("found") and is_enriched(doc):
            found.append({**doc, "_routing": routing})
    return found


def _before(
    client: Elasticsearch, alias: str, hits: list[Hit], *, exclude: Collection[str]
) -> list[list[Hit]]:
    """For each of `hits`, the up to `CONTEXT_REACH` turns before it in its session,
    oldest first, none of `exclude`."""
    if not hits:
        return []
    searches: list[dict[str, Any]] = []
    for hit in hits:
        source = hit["_source"]
        user = source["user_id"]
        scope = _session_filter(user, source["session_id"])
        if exclude:
            scope = [*scope, {"bool": {"must_not": [{"ids": {"values": sorted(exclude)}}]}}]
        searches += _look(alias, user, scope, before=position(source), size=CONTEXT_REACH)
    return [answer[::-1] for answer in _msearch(client, searches)]


def _session_filter(user: str, session: str) -> list[dict[str, Any]]:
    return user_filter(user, session_id=session)


def _head_line(alias: str, user: str) -> dict[str, Any]:
    return {"index": alias, "routing": user, "allow_partial_search_results": False}


def _common() -> dict[str, Any]:
    return {"_source": [*_TURN_SOURCE, ENRICHED_FIELD], "track_total_hits": False}


def _look(
    alias: str,
    user: str,
    scope: list[dict[str, Any]],
    *,
    size: int,
    before: list[Any] | None = None,
    after_: list[Any] | None = None,
) -> list[dict[str, Any]]:
    """An `msearch` pair: the `size` turns of `scope` nearest before (newest first) or
    after a position."""
    ascending = event_order()
    sort = [{field: "desc" for field in k} for k in ascending] if before is not None else ascending
    body = {**_common(), "query": {"bool": {"filter": scope}}, "sort": sort,
            "search_after": before if before is not None else after_, "size": size}  # fmt: skip
    return [_head_line(alias, user), body]


def _msearch(client: Elasticsearch, searches: list[dict[str, Any]]) -> list[list[Hit]]:
    if not searches:
        return []
    answers = client.msearch(searches=searches).body["responses"]
    hits = []
    for answer in answers:
        if "error" in answer:
            raise IndexerError(f"Reading a session's turns failed: {answer['error']}.")
        hits.append(answer["hits"]["hits"])
    return hits
