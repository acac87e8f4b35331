"""Erasure of a scope with core features only (no `_delete_by_query`, which some
distributions lack): tombstone, refresh, then `search_after` pages of matching ids
deleted with routed bulk requests.

The tombstone goes first, so a writer racing with the erasure either sees it (and
refuses or undoes its write) or wrote before the refresh (and the search finds the
document). Passes repeat until one finds nothing, which also catches documents
whose sort values tie across pages.

The rule: an erasure covers the scope's events stamped at or before the instant it
was requested (`at`, by this host's clock), whenever they were acknowledged. Those are
removed, and its tombstone, which stays at that instant, refuses them afterwards (late
retries, replays). Events stamped after it are new: they are kept, even when they were
acknowledged while the erasure ran, and the scope's later events are stored as usual.
An event stamped ahead of this host's clock (a producer whose clock runs fast) counts
as new too: erase again once that instant has passed.
"""

import functools
import time
from collections.abc import Callable
from typing import Any

from elasticsearch import ApiError, Elasticsearch
from pydantic import BaseModel, Field

from session_recall.core.instant import Instant
from session_recall.indexer import bulk, tombstones
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.errors import AliasMissing, ErasureIncomplete, IndexerError
from session_recall.indexer.retry import RetryPolicy, call_with_retries
from session_recall.indexer.scope import Scope

PAGE_SIZE = 1000
# With the tombstone in place nothing new may land, so a second pass normally finds
# nothing; more passes than this mean something keeps writing around the tombstone.
MAX_PASSES = 10
# Ties on [timestamp, event_id] are only possible across users (a contact scope);
# user_id breaks them. `_id` cannot be sorted on, and `_doc` is not stable without a PIT.
_SORT = [{"timestamp": "asc"}, {"event_id": "asc"}, {"user_id": "asc"}]


class ErasureResult(BaseModel):
    scope: Scope
    removed: int
    passes: int
    erased_at: Instant = Field(
        description="The instant the erasure covers: the scope's events stamped at or "
        "before it were removed and are refused from now on; later ones are kept."
    )


def erase(
    client: Elasticsearch,
    alias: str,
    scope: Scope,
    *,
    at: Instant | None = None,
    page_size: int = PAGE_SIZE,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ErasureResult:
    """Remove every event of `scope` behind `alias` stamped at or before `at` (the
    instant the erasure was requested; now by default) and keep its tombstone, so
    later arrivals of them (retries, replays) are refused by the writer."""
    policy = policy or RetryPolicy()
    try:
        return _erase(client, alias, scope, at or Instant.now(), page_size, policy, sleep)
    except ApiError as err:
        raise IndexerError(
            f"Elasticsearch refused the erasure ({err.status_code}): {err.error}.",
            hint="Check the alias and the credentials' privileges, then run it again.",
        ) from None


def _erase(
    client: Elasticsearch,
    alias: str,
    scope: Scope,
    at: Instant,
    page_size: int,
    policy: RetryPolicy,
    sleep: Callable[[float], None],
) -> ErasureResult:
    if not call_with_retries(
        lambda: bool(client.indices.exists_alias(name=alias)),
        policy=policy,
        what="find the alias",
        sleep=sleep,
    ):
        raise AliasMissing(
            f"{alias!r} is not an alias: there is nothing to erase from.",
            hint="Check --index (or SESSION_RECALL_INDEX).",
        )

    call_with_retries(
        lambda: tombstones.record(client, alias, scope, erased_at=at),
        policy=policy,
        what="write the tombstone",
        sleep=sleep,
    )
    covered = {"range": {"timestamp": {"lte": at.to_elasticsearch()}}}
    query = {"bool": {"filter": [scope.query(), covered]}}
    removed = 0
    for passes in range(1, MAX_PASSES + 1):
        call_with_retries(
            lambda: client.indices.refresh(index=alias),
            policy=policy,
            what="refresh the events",
            sleep=sleep,
        )
        seen, deleted = _pass(client, alias, scope.routing, query, page_size, policy, sleep)
        removed += deleted
        if seen == 0:
            return ErasureResult(scope=scope, removed=removed, passes=passes, erased_at=at)
    raise ErasureIncomplete(
        f"Events of {scope.describe()} were still found after {MAX_PASSES} passes.",
        hint="Run the same delete again; the tombstone is in place.",
    )


def _pass(
    client: Elasticsearch,
    alias: str,
    routing: str | None,
    query: dict[str, Any],
    page_size: int,
    policy: RetryPolicy,
    sleep: Callable[[float], None],
) -> tuple[int, int]:
    """(documents seen, documents deleted)."""
    seen = deleted = 0
    after: list[Any] | None = None
    while True:
        page = functools.partial(
            client.search,
            index=alias,
            routing=routing,
            query=query,
            sort=_SORT,
            size=page_size,
            source=False,
            track_total_hits=False,
            search_after=after,
        )
        response = call_with_retries(page, policy=policy, what="search the scope", sleep=sleep)
        hits = response.body["hits"]["hits"]
        if not hits:
            return seen, deleted
        seen += len(hits)
        actions: list[bulk.Action] = [
            ({"delete": {"_index": h["_index"], "_id": h["_id"], "routing": h["_routing"]}}, None)
            for h in hits
        ]
        responses = bulk.send(client, actions, policy=policy, stats=BulkStats(), sleep=sleep)
        deleted += sum(1 for r in responses if r.result == "deleted")
        after = hits[-1]["sort"]
