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
import uuid
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from elasticsearch import ApiError, Elasticsearch
from pydantic import BaseModel, Field

from session_recall.core.access import role_hint
from session_recall.core.instant import Instant
from session_recall.indexer import bulk, tombstones
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.deadline import Deadline, bounded
from session_recall.indexer.enrichment import memory_erasure, paging, repair
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


class ErasureResult(BaseModel):
    scope: Scope
    removed: int
    passes: int
    erased_at: Instant = Field(
        description="The instant the erasure covers: the scope's events stamped at or "
        "before it were removed and are refused from now on; later ones are kept."
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
    """Remove every event of `scope` behind `alias` stamped at or before `at` (the
    instant the erasure was requested; now by default) and keep its tombstone, so
    later arrivals of them (retries, replays) are refused by the writer.

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
    """How many events `erase` would remove now: the scope's stored events stamped up
    to now, counted after a refresh (as the erasure does). Deletes nothing and writes
    no tombstone."""
    erasure = _Erasure(client, alias, policy or RetryPolicy(), sleep, None)
    try:
        return erasure.preview(scope, Instant.now())
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
        removed = 0
        for passes in range(1, MAX_PASSES + 1):
            self._retry(lambda es: es.indices.refresh(index=alias), "refresh the events")
            seen, deleted = self._pass(scope, query, page_size)
            removed += deleted
            if seen == 0:
                return ErasureResult(scope=scope, removed=removed, passes=passes, erased_at=at)
        raise ErasureIncomplete(
            f"Events of {scope.describe()} were still found after {MAX_PASSES} passes.",
            hint="Run the same delete again; the tombstone is in place.",
        )

    def preview(self, scope: Scope, at: Instant) -> ErasurePreview:
        alias = self.alias
        self._require_alias()
        self._retry(lambda es: es.indices.refresh(index=alias), "refresh the events")
        response = self._retry(
            lambda es: es.count(index=alias, routing=scope.routing, query=_covered(scope, at)),
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

    def _pass(self, scope: Scope, query: dict[str, Any], page_size: int) -> tuple[int, int]:
        """(documents seen, documents deleted)."""
        seen = deleted = 0
        after: list[Any] | None = None
        user = scope.user_id
        assert user is not None, "every scope names its user"
        page = functools.partial(
            paging.search_page, alias=self.alias, query=query, routing=scope.routing,
            size=page_size,
        )  # fmt: skip
        while True:
            hits = self._retry(functools.partial(page, after=after), "search the scope")
            if not hits:
                return seen, deleted
            seen += len(hits)
            actions: list[bulk.Action] = [
                (
                    {"delete": {"_index": h["_index"], "_id": h["_id"], "routing": h["_routing"]}},
                    None,
                )
                for h in hits
            ]
            ids = [str(h["_id"]) for h in hits]
            client = bounded(self.client, self.deadline)
            with forgetting(client, self.alias, user, ids, kept_out=query, policy=self.policy):
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
