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
from dataclasses import dataclass
from typing import Any

import orjson
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.core.stems import stems
from session_recall.indexer import bulk
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


@dataclass(frozen=True)
class Window:
    """Turns of one session in order; `first`: they start at its first turn."""

    turns: list[Hit]
    first: bool


def read_windows(
    client: Elasticsearch, alias: str, hits: Sequence[Hit], *, after: int = CONTEXT_REACH
) -> dict[tuple[str, str], Window]:
    """Each session of `hits` (events in the event order, with `sort`): its turns from
    `CONTEXT_REACH` before its first hit to `after` past its last, in one `msearch`.
    Between its first hit and its last, only the turns enriched before are read: the
    others are `hits` (a turn stored since `hits` were found is not there yet, and
    reaches the turns after it when it is enriched in its turn: `followers`)."""
    spans: dict[tuple[str, str], list[Hit]] = {}
    for hit in hits:
        source = hit["_source"]
        spans.setdefault((source["user_id"], source["session_id"]), []).append(hit)
    searches: list[dict[str, Any]] = []
    for (user, session), mine in spans.items():
        scope = _session_filter(user, session)
        first, last = mine[0]["sort"], mine[-1]["sort"]
        bounds = {
            "gte": Instant(first[0]).to_elasticsearch(),
            "lte": Instant(last[0]).to_elasticsearch(),
        }
        span = [{"range": {"timestamp": bounds}}, {"term": {ENRICHED_FIELD: CONTEXT_MARK}}]
        searches += [
            *_look(alias, user, scope, before=first, size=CONTEXT_REACH),
            _head_line(alias, user),
            {**_common(), "query": {"bool": {"filter": [*scope, *span]}}, "sort": event_order(),
             "size": _SPAN},
            *_look(alias, user, scope, after_=last, size=after),
        ]  # fmt: skip
    answers = _msearch(client, searches)
    windows: dict[tuple[str, str], Window] = {}
    for i, (session_key, mine) in enumerate(spans.items()):
        looks = answers[3 * i : 3 * i + 3]
        found = {key(turn): turn for answer in [*looks, mine] for turn in answer}
        turns = sorted(found.values(), key=lambda turn: turn["sort"])
        windows[session_key] = Window(turns, first=len(looks[0]) < CONTEXT_REACH)
    return windows


def followers(window: Window, mine: Collection[Key]) -> list[int]:
    """The turns of `window` (by position) not among `mine` whose context holds one of
    `mine`: those that a turn stored late must reach."""
    found = []
    for i, turn in enumerate(window.turns):
        if key(turn) in mine:
            continue
        before = window.turns[max(i - CONTEXT_REACH, 0) : i]
        if any(key(t) in mine for t in before) and (i >= CONTEXT_REACH or window.first):
            found.append(i)
    return found


def update(hit: Hit, doc: dict[str, Any], *, conditional: bool = True) -> bulk.Action:
    """A bulk `update` of `hit` with `doc`, routed like the event. Conditional on the
    version `hit` was read at (`_seq_no`, `_primary_term`), when it has one: a newer
    write (another enricher's, an erasure's repair) is never overwritten with an older
    view; the conflict leaves the event to be done again from what is there now."""
    target: dict[str, Any] = {"_index": hit["_index"], "_id": hit["_id"]}
    if hit.get("_routing") is not None:
        target["routing"] = hit["_routing"]
    if conditional and "_seq_no" in hit:
        target["if_seq_no"] = hit["_seq_no"]
        target["if_primary_term"] = hit["_primary_term"]
    body = orjson.dumps({"doc": doc}, option=orjson.OPT_SERIALIZE_NUMPY)
    return {"update": target}, body


def gone(client: Elasticsearch, turns: Iterable[Hit]) -> set[str]:
    """The `_id`s of `turns` no longer stored, read in real time: erased since they
    were read."""
    wanted = {
        str(turn["_id"]): {"_index": turn["_index"], "_id": turn["_id"], "routing": routing}
        for turn in turns
        if (routing := turn.get("_routing")) is not None
    }
    if not wanted:
        return set()
    response = client.mget(docs=list(wanted.values()), source=False, realtime=True)
    missing = set()
    for doc in response.body.get("docs", ()):
        if doc.get("found"):
            continue
        if "error" in doc:
            raise IndexerError(f"Reading turns in real time failed: {doc['error']}.")
        missing.add(str(doc["_id"]))
    return missing


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
    from the turns stored before it now, leaving out the `_id`s of `exclude` (erased,
    though a search may still see them). Each write is conditional on the version just
    read; one that meets a newer write is read and done again. Returns how many were
    rewritten; an event gone or not enriched yet is left alone (the pass that enriches
    it reads what is there then)."""
    pending = {k: routing for k, routing in targets}
    rewritten = 0
    for _ in range(_REPAIR_ATTEMPTS):
        if not pending:
            return rewritten
        current = read_enriched(client, pending)
        changed, actions = [], []
        windows = _before(client, alias, current, exclude=exclude)
        for hit, turns in zip(current, windows, strict=True):
            terms = turn_terms([*turns, hit])
            doc = context_fields([*turns, hit], terms, len(turns))
            if listed(hit, CONTEXT_OF_FIELD) != doc[CONTEXT_OF_FIELD]:  # else true already
                changed.append(hit)
                actions.append(update(hit, doc))
        responses = bulk.send(client, actions, policy=policy, stats=stats or BulkStats())
        retry: dict[Key, str] = {}
        for hit, response in zip(changed, responses, strict=True):
            if 200 <= response.status < 300:
                rewritten += 1
            elif response.status == 409:
                retry[key(hit)] = pending[key(hit)]
            elif response.status != 404:
                raise IndexerError(f"Rebuilding a context failed: {response.error}.")
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
        yield from hits
        if len(hits) < size:
            return
        after = hits[-1]["sort"]


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
    return [{"term": {"user_id": user}}, {"term": {"session_id": session}}]


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
