"""Erasure of a scope with core features only (no `_delete_by_query`, which some
distributions lack): tombstone, refresh, then `search_after` pages of matching ids
deleted with routed bulk requests.

The tombstone goes first, so a writer racing with the erasure either sees it (and
refuses or undoes its write) or wrote before the refresh (and the search finds the
document). Passes repeat until one finds nothing, which also catches documents
whose sort values tie across pages.

An erased event's words also live in the contexts of the turns after it
(`enrichment.repair`). Each page is removed inside `forgetting`: a record of the page's
ids goes first, then the events are deleted, the alias refreshed, and the contexts
that hold them rebuilt without them; the record goes last. An erasure that stops
half-way leaves its record, and the next erasure of the alias finishes its rebuilding
before doing its own.

The rule: an erasure removes every event of the scope that is stored when it runs,
whatever its timestamp, and refuses afterwards every event of the scope stamped at or
before the instant it was requested (`at`, by this host's clock): late retries and
replays of what it removed. "Stored when it runs" is what a point in time opened once
its tombstone is in place holds (a snapshot of the scope). An event it removes that is
stamped after `at` (a producer whose clock runs fast, an `at` in the past) gets a
tombstone of its own at its own timestamp (`tombstones.record_events`), so that its
replays are refused too. Events stamped after `at` that arrive after the snapshot are
new: they are kept, even when they were acknowledged while the erasure ran, and the
result counts them (`kept`); the scope's later events are stored as usual.
"""

import contextlib
import functools
import time
import uuid
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from elasticsearch import ApiError, Elasticsearch, TransportError
from pydantic import BaseModel, Field

from session_recall.core.access import role_hint
from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.indexer import bulk, tombstones
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.deadline import Deadline, bounded
from session_recall.indexer.enrichment import memory_erasure, paging, repair, session_documents
from session_recall.indexer.errors import (
    AliasMissing,
    ErasureIncomplete,
    IndexerError,
    refusal_reason,
)
from session_recall.indexer.retry import RetryPolicy, call_with_retries
from session_recall.indexer.scope import Scope

T = TypeVar("T")

PAGE_SIZE = 1000
# With the tombstone in place nothing new may land, so a second pass normally finds
# nothing; more passes than this mean something keeps writing around the tombstone.
MAX_PASSES = 10
# The snapshot of what is stored lives between its pages only: a minute is ample.
_KEEP_ALIVE = "1m"


class ErasureResult(BaseModel):
    scope: Scope
    removed: int
    passes: int
    erased_at: Instant = Field(
        description="The instant the erasure was requested: every event of the scope "
        "stored when it ran was removed, whatever its timestamp, and the scope's events "
        "stamped at or before this instant are refused from now on."
    )
    kept: int = Field(
        default=0,
        description="The scope's events still stored once the erasure ended: each arrived "
        "after the erasure took stock of what was stored, stamped after `erased_at`, so "
        "it is a new event (`kept_because` says so). Erase again to remove them too.",
    )
    kept_because: str | None = Field(
        default=None, description="Why the `kept` events were kept; absent when none was."
    )


class ErasurePreview(BaseModel):
    """What an erasure of `scope` would remove now; nothing was changed."""

    scope: Scope
    events: int


def erase(
    client: Elasticsearch,
    alias: str,
    scope: Scope,
    *,
    at: Instant | None = None,
    page_size: int = PAGE_SIZE,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    deadline: Deadline | None = None,
) -> ErasureResult:
    """Remove every event of `scope` stored behind `alias`, whatever its timestamp,
    and keep its tombstone at `at` (the instant the erasure was requested; now by
    default), so that later arrivals of the scope's events stamped up to it (retries,
    replays) are refused by the writer; each removed event stamped after `at` gets a
    tombstone of its own, which refuses its replays. Events stamped after `at` that
    arrive once the erasure took stock are kept, and counted (`ErasureResult.kept`).

    With a `deadline`, it stops there with `WriteUnavailable`: what it removed stays
    removed and the tombstone is in place, so running it again finishes the work."""
    erasure = _Erasure(client, alias, policy or RetryPolicy(), sleep, deadline)
    try:
        return erasure.run(scope, at or Instant.now(), page_size)
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
    """How many events `erase` would remove now: the scope's stored events, whatever
    their timestamps, counted after a refresh (as the erasure does). Deletes nothing
    and writes no tombstone."""
    erasure = _Erasure(client, alias, policy or RetryPolicy(), sleep, None)
    try:
        return erasure.preview(scope)
    except ApiError as err:
        raise _refused(err) from None


@contextmanager
def forgetting(
    client: Elasticsearch,
    alias: str,
    user_id: str,
    ids: Collection[str],
    *,
    kept_out: dict[str, Any] | None = None,
    policy: RetryPolicy | None = None,
) -> Iterator[None]:
    """Around the removal of the events `ids` (`_id`s) of `user_id`: once the block has
    removed them, every context that holds one is rebuilt without it. A record of the
    ids is written first and removed last, so a removal that fails or stops half-way is
    finished by the next erasure of the alias (`finish_repairs`). `kept_out`: a query
    for events about to be removed too, whose contexts need no rebuilding. The tombstone
    index exists (`tombstones.ensure_index`)."""
    policy = policy or RetryPolicy()
    record = _record_repair(client, alias, user_id, ids)
    yield
    _repair(client, alias, user_id, ids, kept_out=kept_out, policy=policy)
    _drop_record(client, alias, record)


def after_removal(
    client: Elasticsearch,
    alias: str,
    user_id: str,
    ids: Collection[str],
    *,
    policy: RetryPolicy | None = None,
) -> None:
    """Once the events `ids` of `user_id` are removed by the caller (a conditional
    delete: `pop_item`), rebuild the contexts that hold them: recorded first, so that a
    rebuilding that fails is finished by the next erasure of the alias."""
    tombstones.ensure_index(client, alias)
    with forgetting(client, alias, user_id, ids, policy=policy):
        pass  # removed already


def finish_repairs(client: Elasticsearch, alias: str, *, policy: RetryPolicy | None = None) -> int:
    """Rebuild the contexts that removals which stopped half-way left holding their
    events; how many such removals there were. A record whose events are not all gone
    belongs to a removal under way (or one that failed before it removed anything, and
    is run again): it is left to it."""
    index = tombstones.tombstone_index(alias)
    if not tombstones.index_exists(client, alias):
        return 0
    client.indices.refresh(index=index)
    found = client.search(
        index=index,
        query={"term": {"kind": "repair"}},
        size=1000,
        source_includes=["user_id", "ids"],
    ).body["hits"]["hits"]
    finished = 0
    for hit in found:
        user, ids = hit["_source"]["user_id"], hit["_source"].get("ids") or []
        if not _all_gone(client, alias, user, ids):
            continue
        _repair(client, alias, user, ids, kept_out=None, policy=policy or RetryPolicy())
        _drop_record(client, alias, hit["_id"])
        finished += 1
    return finished


def _all_gone(client: Elasticsearch, alias: str, user_id: str, ids: list[str]) -> bool:
    """Whether no event of `ids` is stored any more, after a refresh of the alias."""
    client.indices.refresh(index=alias)
    query = {"bool": {"filter": [{"ids": {"values": ids}}]}}
    return int(client.count(index=alias, routing=user_id, query=query)["count"]) == 0


def _record_repair(client: Elasticsearch, alias: str, user_id: str, ids: Collection[str]) -> str:
    record = f"repair-{uuid.uuid4().hex}"
    body = {"kind": "repair", "user_id": user_id, "ids": sorted(ids)}
    client.index(index=tombstones.tombstone_index(alias), id=record, document=body)
    return record


def _drop_record(client: Elasticsearch, alias: str, record: str) -> None:
    # Gone already: `finish_repairs` of another erasure finished it.
    lenient = client.options(ignore_status=404)
    lenient.delete(index=tombstones.tombstone_index(alias), id=record, refresh=True)


def _repair(
    client: Elasticsearch,
    alias: str,
    user_id: str,
    ids: Collection[str],
    *,
    kept_out: dict[str, Any] | None,
    policy: RetryPolicy,
) -> None:
    # After the removal: a refresh, the note of it, a refresh. A context written before
    # the note is found by the search below; a pass (or a repair) that read before the
    # note and writes after it sees the note move and reads the turns its contexts hold
    # in real time, seeing this event gone (`context.write_checked`).
    note_removal(client, alias)
    repair.repair_erased(client, alias, user_id, ids, kept_out=kept_out, policy=policy)
    memory_erasure.remove_with_sources(client, alias, user_id, ids)
    session_documents.rebuild_holding(client, alias, user_id, ids, policy=policy)


def note_removal(client: Elasticsearch, alias: str) -> None:
    """What every removal of events does once they are gone (erasure, pop, prune),
    before it rebuilds the contexts that held them: see `_repair`. The tombstone index
    exists."""
    client.indices.refresh(index=alias)
    tombstones.bump_removals(client, alias)
    client.indices.refresh(index=alias)


def _refused(err: ApiError) -> IndexerError:
    return IndexerError(
        f"Elasticsearch refused the erasure: {refusal_reason(err)}.",
        hint=role_hint("admin")
        if err.status_code == 403
        else "Check the alias and the credentials' privileges, then run it again.",
    )


def _covered(scope: Scope, at: Instant) -> dict[str, Any]:
    """The scope's events an erasure at `at` covers."""
    stamped = {"range": {"timestamp": {"lte": at.to_elasticsearch()}}}
    return {"bool": {"filter": [scope.query(), stamped]}}


@dataclass
class _Snapshot:
    """A point in time's id, which each page's answer may renew."""

    id: str


@dataclass(frozen=True)
class _Erasure:
    client: Elasticsearch
    alias: str
    policy: RetryPolicy
    sleep: Callable[[float], None]
    deadline: Deadline | None

    def run(self, scope: Scope, at: Instant, page_size: int) -> ErasureResult:
        alias = self.alias
        self._require_alias()
        self._retry(
            lambda es: tombstones.record(es, alias, scope, erased_at=at), "write the tombstone"
        )
        self._retry(
            lambda es: finish_repairs(es, alias, policy=self.policy),
            "finish the context rebuilding an earlier erasure left",
        )
        query = _covered(scope, at)
        removed = self._stored_after(scope, at, query, page_size)
        for passes in range(1, MAX_PASSES + 1):
            self._retry(lambda es: es.indices.refresh(index=alias), "refresh the events")
            seen, deleted = self._pass(scope, query, self._live_pages(scope, query, page_size))
            removed += deleted
            if seen == 0:
                return self._result(scope, at, removed, passes)
        raise ErasureIncomplete(
            f"Events of {scope.describe()} were still found after {MAX_PASSES} passes.",
            hint="Run the same delete again; the tombstone is in place.",
        )

    def _stored_after(
        self, scope: Scope, at: Instant, covered: dict[str, Any], page_size: int
    ) -> int:
        """Remove the scope's events stamped after `at` that are stored now (those in a
        point in time opened after a refresh), each with a tombstone of its own at its
        timestamp first; how many were deleted. The passes that follow remove the
        scope's events stamped up to `at`, which the writer refuses from now on."""
        alias = self.alias
        self._retry(lambda es: es.indices.refresh(index=alias), "refresh the events")
        later = {"range": {"timestamp": {"gt": at.to_elasticsearch()}}}
        query = {"bool": {"filter": [scope.query(), later]}}
        opened = self._retry(
            lambda es: es.open_point_in_time(
                index=alias, keep_alive=_KEEP_ALIVE, routing=scope.routing
            ),
            "take stock of the scope's events",
        )
        snapshot = _Snapshot(str(opened["id"]))
        try:
            pages = self._snapshot_pages(snapshot, query, page_size)
            return self._pass(scope, covered, pages, first=self._refuse_replays)[1]
        finally:
            # Expires by itself otherwise: a close that fails costs the node a minute.
            with contextlib.suppress(ApiError, TransportError):
                self.client.close_point_in_time(id=snapshot.id)

    def _live_pages(
        self, scope: Scope, query: dict[str, Any], page_size: int
    ) -> Callable[..., list[Any]]:
        return functools.partial(
            paging.search_page, alias=self.alias, query=query, routing=scope.routing,
            size=page_size,
        )  # fmt: skip

    def _snapshot_pages(
        self, snapshot: "_Snapshot", query: dict[str, Any], page_size: int
    ) -> Callable[..., list[Any]]:
        def page(es: Elasticsearch, *, after: list[Any] | None) -> list[Any]:
            response = es.search(
                pit={"id": snapshot.id, "keep_alive": _KEEP_ALIVE},
                query=query,
                sort=event_order(),
                size=page_size,
                source_includes=["event_id", "timestamp"],
                track_total_hits=False,
                search_after=after,
                allow_partial_search_results=False,
            )
            snapshot.id = str(response.body.get("pit_id", snapshot.id))
            hits: list[Any] = response.body["hits"]["hits"]
            return hits

        return page

    def _refuse_replays(self, user: str, hits: list[Any]) -> None:
        """Before events stamped after the erasure's instant go: a tombstone of each at
        its own timestamp (the latest of its copies), so that its replays are refused."""
        stamps: dict[str, Instant] = {}
        for hit in hits:
            source = hit["_source"]
            stamp = Instant.parse(source["timestamp"])
            held = stamps.get(source["event_id"])
            if held is None or held.nanos < stamp.nanos:
                stamps[source["event_id"]] = stamp
        alias = self.alias
        self._retry(
            lambda es: tombstones.record_events(es, alias, user, stamps),
            "write the tombstones of events stamped after the erasure",
        )

    def _result(self, scope: Scope, at: Instant, removed: int, passes: int) -> ErasureResult:
        """The answer, with the scope's events still stored: arrived after the stock was
        taken, stamped after `at` (the last pass found none stamped up to it)."""
        alias = self.alias
        response = self._retry(
            lambda es: es.count(index=alias, routing=scope.routing, query=scope.query()),
            "count the scope's events kept",
        )
        kept = int(response["count"])
        because = None
        if kept:
            because = (
                f"stored after the erasure took stock of {scope.describe()}, and stamped "
                f"after {at.isoformat()}: new events. Erase again to remove them too."
            )
        return ErasureResult(
            scope=scope, removed=removed, passes=passes, erased_at=at, kept=kept,
            kept_because=because,
        )  # fmt: skip

    def preview(self, scope: Scope) -> ErasurePreview:
        alias = self.alias
        self._require_alias()
        self._retry(lambda es: es.indices.refresh(index=alias), "refresh the events")
        response = self._retry(
            lambda es: es.count(index=alias, routing=scope.routing, query=scope.query()),
            "count the scope's events",
        )
        return ErasurePreview(scope=scope, events=int(response["count"]))

    def _require_alias(self) -> None:
        alias = self.alias
        if not self._retry(lambda es: bool(es.indices.exists_alias(name=alias)), "find the alias"):
            raise AliasMissing(
                f"{alias!r} is not an alias these credentials can see: there is nothing "
                "to erase from.",
                hint="Check --index (or SESSION_RECALL_INDEX); erasure needs the admin role "
                "(`session-recall roles show --role admin`).",
            )

    def _pass(
        self,
        scope: Scope,
        kept_out: dict[str, Any],
        page: Callable[..., list[Any]],
        *,
        first: Callable[[str, list[Any]], None] | None = None,
    ) -> tuple[int, int]:
        """(documents seen, documents deleted), of the pages `page(client, after=...)`
        finds. `kept_out`: a query for events the erasure removes anyway (`forgetting`).
        `first(user, hits)` runs before a page's events are deleted."""
        seen = deleted = 0
        after: list[Any] | None = None
        user = scope.user_id
        assert user is not None, "every scope names its user"
        while True:
            hits = self._retry(functools.partial(page, after=after), "search the scope")
            if not hits:
                return seen, deleted
            seen += len(hits)
            if first is not None:
                first(user, hits)
            actions: list[bulk.Action] = [
                (
                    {"delete": {"_index": h["_index"], "_id": h["_id"], "routing": h["_routing"]}},
                    None,
                )
                for h in hits
            ]
            ids = [str(h["_id"]) for h in hits]
            client = bounded(self.client, self.deadline)
            with forgetting(client, self.alias, user, ids, kept_out=kept_out, policy=self.policy):
                responses = bulk.send(
                    self.client,
                    actions,
                    policy=self.policy,
                    stats=BulkStats(),
                    sleep=self.sleep,
                    deadline=self.deadline,
                )
            deleted += sum(1 for r in responses if r.result == "deleted")
            after = hits[-1]["sort"]

    def _retry(self, func: Callable[[Elasticsearch], T], what: str) -> T:
        """`func(client)`, retried; each attempt's client bounded by the deadline."""
        return call_with_retries(
            lambda: func(bounded(self.client, self.deadline)),
            policy=self.policy,
            what=what,
            sleep=self.sleep,
            deadline=self.deadline,
        )
