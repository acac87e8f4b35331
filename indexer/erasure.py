"""Erasure of a scope with core features only (no `_delete_by_query`, which some
distributions lack): tombstone, refresh, then `search_after` pages of matching ids
deleted with routed bulk requests.

The tombstone goes first, so a writer racing with the erasure either sees it (and
refuses or undoes its write) or wrote before the refresh (and the search finds the
document). Passes repeat until one finds nothing, which also catches documents
whose sort values tie across pages.

The tombstone covers events stamped up to the erasure's start, so the scope's new
events are stored again afterwards. When the erasure removes an event stamped later
than that (a producer's clock ahead of this one), the tombstone is raised to cover
it before the next pass, so a replay of it cannot bring it back either.
"""

import functools
import time
from collections.abc import Callable
from typing import Any

from elasticsearch import ApiError, Elasticsearch
from pydantic import BaseModel

from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.indexer import bulk, tombstones
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.errors import AliasMissing, ErasureIncomplete, IndexerError
from session_recall.indexer.retry import RetryPolicy, call_with_retries
from session_recall.indexer.scope import Scope

PAGE_SIZE = 1000
# With the tombstone in place nothing new may land, so a second pass normally finds
# nothing; more passes than this mean something keeps writing around the tombstone.
MAX_PASSES = 10


class ErasureResult(BaseModel):
    scope: Scope
    removed: int
    passes: int


class ErasurePreview(BaseModel):
    """What an erasure of `scope` would remove now; nothing was changed."""

    scope: Scope
    events: int


def erase(
    client: Elasticsearch,
    alias: str,
    scope: Scope,
    *,
    page_size: int = PAGE_SIZE,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ErasureResult:
    """Remove every event of `scope` behind `alias` and keep its tombstone, so later
    arrivals of the same scope (retries, replays) are refused by the writer."""
    policy = policy or RetryPolicy()
    try:
        return _erase(client, alias, scope, page_size, policy, sleep)
    except ApiError as err:
        raise _refused(err) from None


def preview_erasure(
    client: Elasticsearch,
    alias: str,
    scope: Scope,
    *,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ErasurePreview:
    """How many events `erase` would remove now: the scope's stored events, counted
    after a refresh (as the erasure does). Deletes nothing and writes no tombstone."""
    retry = _retrying(policy or RetryPolicy(), sleep)
    try:
        _require_alias(client, alias, retry)
        retry(lambda: client.indices.refresh(index=alias), what="refresh the events")
        response = retry(
            lambda: client.count(index=alias, routing=scope.routing, query=scope.query()),
            what="count the scope's events",
        )
    except ApiError as err:
        raise _refused(err) from None
    return ErasurePreview(scope=scope, events=int(response["count"]))


def _refused(err: ApiError) -> IndexerError:
    return IndexerError(
        f"Elasticsearch refused the erasure ({err.status_code}): {err.error}.",
        hint="Check the alias and the credentials' privileges, then run it again.",
    )


# `call_with_retries` bound to one policy and sleep: retry(func, what="...").
Retry = Callable[..., Any]


def _retrying(policy: RetryPolicy, sleep: Callable[[float], None]) -> Retry:
    return functools.partial(call_with_retries, policy=policy, sleep=sleep)


def _require_alias(client: Elasticsearch, alias: str, retry: Retry) -> None:
    if not retry(lambda: bool(client.indices.exists_alias(name=alias)), what="find the alias"):
        raise AliasMissing(
            f"{alias!r} is not an alias: there is nothing to erase from.",
            hint="Check --index (or SESSION_RECALL_INDEX).",
        )


def _erase(
    client: Elasticsearch,
    alias: str,
    scope: Scope,
    page_size: int,
    policy: RetryPolicy,
    sleep: Callable[[float], None],
) -> ErasureResult:
    retry = _retrying(policy, sleep)
    _require_alias(client, alias, retry)

    def tombstone(at: Instant) -> Instant:
        retry(
            lambda: tombstones.record(client, alias, scope, erased_at=at),
            what="write the tombstone",
        )
        return at

    covered = tombstone(Instant.now())
    removed = 0
    for passes in range(1, MAX_PASSES + 1):
        retry(lambda: client.indices.refresh(index=alias), what="refresh the events")
        seen, deleted, latest = _pass(client, alias, scope, page_size, policy, sleep)
        removed += deleted
        if seen == 0:
            return ErasureResult(scope=scope, removed=removed, passes=passes)
        if latest > covered.nanos:
            # Before the next pass, which removes what was stored meanwhile in that span.
            covered = tombstone(Instant(latest))
    raise ErasureIncomplete(
        f"Events of {scope.describe()} were still found after {MAX_PASSES} passes.",
        hint="Run the same delete again; the tombstone is in place.",
    )


def _pass(
    client: Elasticsearch,
    alias: str,
    scope: Scope,
    page_size: int,
    policy: RetryPolicy,
    sleep: Callable[[float], None],
) -> tuple[int, int, int]:
    """(documents seen, documents deleted, latest timestamp seen in nanoseconds)."""
    seen = deleted = latest = 0
    after: list[Any] | None = None
    while True:
        page = functools.partial(
            client.search,
            index=alias,
            routing=scope.routing,
            query=scope.query(),
            sort=event_order(),
            size=page_size,
            source=False,
            track_total_hits=False,
            search_after=after,
        )
        response = call_with_retries(page, policy=policy, what="search the scope", sleep=sleep)
        hits = response.body["hits"]["hits"]
        if not hits:
            return seen, deleted, latest
        seen += len(hits)
        actions: list[bulk.Action] = [
            ({"delete": {"_index": h["_index"], "_id": h["_id"], "routing": h["_routing"]}}, None)
            for h in hits
        ]
        responses = bulk.send(client, actions, policy=policy, stats=BulkStats(), sleep=sleep)
        deleted += sum(1 for r in responses if r.result == "deleted")
        after = hits[-1]["sort"]
        latest = max(latest, int(after[0]))  # date_nanos sorts on epoch nanoseconds
