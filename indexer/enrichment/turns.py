"""The enrichment's reads of a session's turns: the windows a page's contexts are built
from, the turns before an event, and the real-time checks that a turn is still there.
`CONTEXT_REACH` is read from the context rule at each use."""

from collections.abc import Iterable, Sequence
from typing import Any

from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.core.user_filter import user_filter
from session_recall.indexer.enrichment import context_rule as rule
from session_recall.indexer.enrichment.context_rule import (
    CONTEXT_MARK,
    CONTEXT_OF_FIELD,
    ENRICHED_FIELD,
    STEMS_FIELD,
    Hit,
    Key,
    is_enriched,
    key,
    position,
)
from session_recall.indexer.errors import IndexerError

# The turns of one session read between a page's first and last event of it.
_SPAN = 10_000
TURN_SOURCE = ["text", "user_id", "session_id", "timestamp", "event_id"]
# A turn's per-document error in a real-time read when its partition was pruned.
_NO_INDEX = "index_not_found_exception"


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
        scope = user_filter(user, session_id=session)
        first, last = mine[0]["sort"], mine[-1]["sort"]
        searches += _look(alias, user, scope, before=first, size=rule.CONTEXT_REACH)
        searches += _look(alias, user, scope, after_=last, size=rule.CONTEXT_REACH)
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


def read_enriched(client: Elasticsearch, targets: dict[Key, str]) -> list[Hit]:
    """The enriched ones of `targets` as stored now (real time), with their versions."""
    docs = [{"_index": i, "_id": d, "routing": r} for (i, d), r in targets.items()]
    response = client.mget(
        docs=docs, source_includes=[*TURN_SOURCE, ENRICHED_FIELD, CONTEXT_OF_FIELD], realtime=True
    )
    found = []
    for doc, (_, routing) in zip(response.body["docs"], targets.items(), strict=True):
        if "error" in doc:
            raise IndexerError(f"Reading an event in real time failed: {doc['error']}.")
        if doc.get("found") and is_enriched(doc):
            found.append({**doc, "_routing": routing})
    return found


def turns_before(
    client: Elasticsearch, alias: str, hits: list[Hit], *, exclude: Iterable[str]
) -> list[list[Hit]]:
    """For each of `hits`, the up to `CONTEXT_REACH` turns before it in its session,
    oldest first, none of `exclude`."""
    if not hits:
        return []
    excluded = sorted(exclude)
    searches: list[dict[str, Any]] = []
    for hit in hits:
        source = hit["_source"]
        user = source["user_id"]
        scope = user_filter(user, session_id=source["session_id"])
        if excluded:
            scope = [*scope, {"bool": {"must_not": [{"ids": {"values": excluded}}]}}]
        searches += _look(alias, user, scope, before=position(source), size=rule.CONTEXT_REACH)
    return [answer[::-1] for answer in _msearch(client, searches)]


def read_sessions(
    client: Elasticsearch, alias: str, sessions: Sequence[tuple[str, str]], *, size: int
) -> dict[tuple[str, str], list[Hit]]:
    """Each (user, session)'s last `size` turns stored now (refreshed), in order, with
    their stems where the pass wrote them, in one `msearch`: empty for a session that
    has none left."""
    newest = [{field: "desc" for field in k} for k in event_order()]
    searches: list[dict[str, Any]] = []
    for user, session in sessions:
        body = {"_source": [*TURN_SOURCE, STEMS_FIELD], "track_total_hits": False,
                "query": {"bool": {"filter": user_filter(user, session_id=session)}},
                "sort": newest, "size": size}  # fmt: skip
        searches += [_head_line(alias, user), body]
    found = _msearch(client, searches)
    return {pair: hits[::-1] for pair, hits in zip(sessions, found, strict=True)}


def _head_line(alias: str, user: str) -> dict[str, Any]:
    return {"index": alias, "routing": user, "allow_partial_search_results": False}


def _common() -> dict[str, Any]:
    return {"_source": [*TURN_SOURCE, ENRICHED_FIELD], "track_total_hits": False}


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
