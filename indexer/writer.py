"""The writer: events in, one result per event out, in input order.

A tombstone covers the events of its scope stamped at or before its `erased_at`.
Per chunk, against a concurrent erasure (which writes its tombstone, refreshes, then
deletes what it finds):
  (a) read the tombstones of the chunk's scopes and refuse the events they cover,
      deleting any copy of them already stored (see below);
  (b) bulk-create the rest (routing = user_id, 409 = already present), each into the
      partition its own timestamp names (see `partitions`), so a replay meets its
      stored copy however late it comes;
  (c) read the tombstones again and delete any document just written that a
      tombstone written in between covers.
A document stored before the tombstone was written is found by the erasure's search
(it refreshes after writing the tombstone); one stored after is seen by (c). When (c)
never completes (its read fails for good, or the process dies), the document stays:
the deletes of (a) remove it when the event comes again, as an at-least-once
producer sends it, so any replay repairs what a failed run left.

Only (c) must be read after its bulk; (a) may be any read made before it. So a chunk
that follows closely on the last one (`tombstone_reuse_s`) takes that one's (c) as
its (a) when it covers the chunk's scopes: two requests per chunk, not three, in a
stream. A tombstone written since is seen by the chunk's own (c), as above: an
event of a scope erased in that second is written and removed again within the same
write, before it is answered (as "scope erased") and before any refresh its request
asked for. After a pause, (a) is read afresh, so that an event of a scope erased
meanwhile is refused before it is written.
"""

import functools
import logging
import operator
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import orjson
from elasticsearch import ApiError, AuthorizationException, Elasticsearch, NotFoundError
from pydantic import BaseModel, Field

from session_recall.core import strict_json
from session_recall.core.access import Role, role_hint
from session_recall.core.instant import Instant
from session_recall.core.partitions import Granularity, PartitionNames, parse_partition
from session_recall.embeddings import Embedder
from session_recall.indexer import bulk, native, tombstones, vectors
from session_recall.indexer.bulk import BulkStats, ItemResponse
from session_recall.indexer.chunking import Flush, chunks_and_flushes
from session_recall.indexer.deadline import Deadline, bounded
from session_recall.indexer.document import (
    DEFAULT_IDENTITY,
    Document,
    Identity,
    to_document,
    unstorable,
)
from session_recall.indexer.enrichment.vector_mapping import check_index
from session_recall.indexer.errors import (
    AliasMissing,
    PrivilegeMissing,
    WriteFailed,
    refusal_reason,
)
from session_recall.indexer.event import Event
from session_recall.indexer.layout import ensure_partition, write_layout
from session_recall.indexer.parsing import EventLimits
from session_recall.indexer.results import SCOPE_ERASED, EventResult, Status
from session_recall.indexer.retry import (
    RetryPolicy,
    Transient,
    call_or_refuse,
    call_with_retries,
)
from session_recall.indexer.scope import (
    ALL_MARKED,
    ANY_EVENT_ERASED,
    events_marker,
    scope_ids_of,
    shared_scopes,
)

if TYPE_CHECKING:
    from session_recall_native import Batch, Builder

log = logging.getLogger(__name__)
# A write's own copy of an erased event (stored in the race with its erasure), or one
# a crashed write left, that these credentials cannot remove.
_COPIES_KEPT = (
    "%d stored cop(ies) of erased events may remain: these credentials %s (the ingest "
    "role may not); run the same `session-recall delete` again with the admin role"
)

T = TypeVar("T")

# An index that went away or was closed since the alias was read holds nothing to
# delete (a closed one cannot be written to either).
_NO_COPY_THERE = frozenset({"index_not_found_exception", "index_closed_exception"})


class WriterOptions(BaseModel):
    # 2,000 small events make a bulk of about half a MB: big enough to amortize a
    # chunk's three requests (tombstones, bulk, tombstones), small enough that a retry
    # resends little; fewer or more cost the client more CPU per event.
    chunk_events: int = Field(default=2000, ge=1)
    # Well under the 100 MB request limit, and bounded memory whatever the texts.
    chunk_bytes: int = Field(default=5 * 1024 * 1024, ge=1024)
    retry: RetryPolicy = RetryPolicy()
    # How recent the last tombstone read must be to serve as a chunk's check (a): a
    # stream's chunks follow each other within it, so a stream reads once, not once a
    # chunk; 0 reads before every bulk.
    tombstone_reuse_s: float = Field(default=1.0, ge=0)
    # Partitions one write may create: one `ingest` run, or one `serve` batch. Each is
    # an index with its shards, and a cluster holds a bounded number of shards (1,000
    # per data node by default): a producer stamping events over centuries must not
    # use them up. 150 covers the default window of accepted times (`EventLimits`,
    # ten years) in monthly partitions; a migration of older histories raises both.
    max_new_partitions: int = Field(
        default=150,
        ge=0,
        description="Partitions one request (serve) or run (ingest) may create; the events "
        "of any more are refused, so that no producer uses up the cluster's shards.",
    )


# Submissions and results are made once per event: not frozen, which would triple the
# cost of building them (see `lines.Line`).
@dataclass(slots=True)
class Submission:
    """An event to store, with the caller's bookmark (`token`) passed back untouched.

    `kept` are fields stored with the event as they are: the vectors a stored copy
    already has, when it is moved (`migration`). Only for a writer without an embedder,
    which would add vector fields of its own."""

    event: Event
    token: Any = None
    kept: dict[str, Any] | None = None


@dataclass(slots=True)
class Written:
    submission: Submission
    result: EventResult


@dataclass(frozen=True, slots=True)
class _TombstoneRead:
    """What a tombstone read found, and when it was sent: `asked` is None when there
    was no tombstone index, which no scope then had a tombstone in."""

    sent_at: float
    asked: frozenset[str] | None  # events' own scopes left out (see `_erased`)
    erased: dict[str, int]
    events_erased: bool = False  # some event was erased on its own (`ANY_EVENT_ERASED`)
    per_user: bool = False  # every such tombstone has its user's marker (`ALL_MARKED`)
    users: frozenset[str] = frozenset()  # the user scopes whose markers were asked for
    marked: frozenset[str] = frozenset()  # those of them that have one

    def answers(self, scopes: "_Scopes") -> bool:
        """This read holds every tombstone a read for `scopes` would find."""
        if self.asked is None:  # no tombstone index then: nothing of any scope
            return True
        if not self.asked.issuperset(scopes.shared()):
            return False
        if not self.events_erased:
            return True
        users = scopes.users()
        return self.per_user and self.users.issuperset(users) and not self.marked & users


class _Scopes(Protocol):
    """The scopes of the events a tombstone read is for."""

    def shared(self) -> frozenset[str]:
        """Every scope but the events' own: their users', sessions' and contacts'."""
        ...

    def users(self) -> frozenset[str]:
        """Their users' scopes."""
        ...

    def own(self, users: frozenset[str] | None) -> frozenset[str]:
        """The own scopes of the events of `users` (user scope ids), or of all (None)."""
        ...


@dataclass(slots=True)
class _Pending:
    submission: Submission
    document: Document | None
    scopes: tuple[str, ...]
    result: EventResult | None = None
    size: int = 0  # the document's, 0 without one: what it adds to a chunk's bytes


class Writer:
    """Writes events to `alias`. Not thread-safe: give each thread a writer of its own.

    With an `embedder`, each event is stored with its vector (see `vectors`); when the
    embedder fails, events are stored without one and counted in `without_vectors`.
    `granularity` is the alias's partition period when the caller knows it (and
    `identity`, the fields that make an event's identity, see `document.Identity`);
    unset, the writer reads both from the index template `setup` installed.

    An event the credential may not store (a 403) is refused with the reason, as one
    the cluster refuses is; with `stop_when_forbidden`, the role the work needs, it
    raises `PrivilegeMissing` instead, naming the role: what `ingest` and `migrate`
    want, whose input stays where a run with a better credential finds it again.
    `stats` counts its bulk requests' retries and 429s (a fresh `BulkStats` by default).
    """

    def __init__(
        self,
        client: Elasticsearch,
        alias: str,
        *,
        options: WriterOptions | None = None,
        embedder: Embedder | None = None,
        granularity: Granularity | None = None,
        identity: Identity = DEFAULT_IDENTITY,
        sleep: Callable[[float], None] = time.sleep,
        stop_when_forbidden: Role | None = None,
        stats: BulkStats | None = None,
    ) -> None:
        self._client = client
        self._stop_when_forbidden = stop_when_forbidden
        self._alias = alias
        self.options = options or WriterOptions()
        self._embedder = embedder
        self._index_checked = embedder is None
        self._vectors_refused = False  # the write index has no vector fields
        self._embedder_failing = False
        self._sleep = sleep
        # The caller's, when it reads them while the writer works (metrics).
        self.stats = stats if stats is not None else BulkStats()
        self.without_vectors = 0
        self._deadline: Deadline | None = None  # of the write in progress
        self._tombstones_seen = False  # the tombstone index exists (it stays)
        self._last_read: _TombstoneRead | None = None
        # The alias's period: given, or read from the index template once (`setup`
        # refuses to change it once partitions exist). And the partitions known to
        # exist: each is made once, ahead of its first bulk.
        self._granularity = granularity
        self._identity = identity  # read with the period when that is not given
        self._partitions_made: set[str] = set()
        self._partitions_created = 0  # by the write in progress (`max_new_partitions`)
        # Partitions whose creation was refused, with the reason, until one is made:
        # what `serve`'s readiness reports.
        self.refused_partitions: dict[str, str] = {}
        self._partition_names: PartitionNames | None = None  # once the period is known
        self._batch_rules: native.Rules | None = None  # the native core's, once asked for

    def write(
        self, submissions: Iterable[Submission | Flush], *, deadline: Deadline | None = None
    ) -> Iterator[Written]:
        """Results in input order, a chunk at a time. A `FLUSH` in the input sends
        the pending chunk at once and yields every result still held back: an idle
        input must not hold events, nor their results, back.

        With a `deadline`, every request and retry fits before it: past it, the write
        raises `WriteUnavailable` rather than retrying on.
        """
        for chunk in self.write_chunks(submissions, deadline=deadline):
            yield from chunk

    def write_chunks(
        self, submissions: Iterable[Submission | Flush], *, deadline: Deadline | None = None
    ) -> Iterator[list[Written]]:
        """`write`'s results a chunk at a time, for a caller whose bookkeeping is
        cheaper per chunk than per event.

        One chunk is written in a worker thread while the next is parsed and
        serialized here (see `_pipelined`); chunks still go out, and come back, in
        order.
        """
        self._deadline = deadline
        self._partitions_created = 0
        self._check_layout()
        self._check_index()
        prepare = self._prepare
        prepared = (item if isinstance(item, Flush) else prepare(item) for item in submissions)
        # Vectors are added in the bulk thread; the chunk bounds count them already.
        extra = vectors.vector_bytes(self._embedder)
        chunks = chunks_and_flushes(
            prepared,
            max_count=self.options.chunk_events,
            max_bytes=self.options.chunk_bytes,
            size=(lambda p: p.size + extra if p.document else 0) if extra else _size,
        )
        for chunk, _ in _pipelined(chunks, self._write_chunk):
            yield _results(chunk)

    def write_batches(
        self, batches: Iterable["Batch | Flush"], *, deadline: Deadline | None = None
    ) -> Iterator[tuple["Batch", dict[int, EventResult]]]:
        """Each batch the native core made (see `native`), once written, with the
        results of its events that were not indexed (already present, or refused, by
        position); every other one was. Pipelined as `write_chunks` is, a `FLUSH`
        answering what is held back. For a writer without an embedder."""
        if self._embedder is not None:
            raise ValueError("batches carry no vectors: write Submissions with an embedder")
        self._deadline = deadline
        self._partitions_created = 0
        self._check_layout()
        yield from _pipelined(batches, self._write_batch)

    def _check_layout(self) -> None:
        if self._granularity is not None:
            return
        alias = self._alias
        layout = self._read(lambda: write_layout(self._es(), alias), "read the index template")
        if layout is None:
            raise AliasMissing(
                f"{alias!r} has no partitioned layout to write to.",
                hint=f"Run `session-recall --index {alias} setup` first.",
            )
        self._granularity, self._identity = layout.granularity, layout.identity

    def _partition(self, event: Event) -> str:
        names = self._partition_names
        if names is None:
            assert self._granularity is not None  # _check_layout ran
            names = self._partition_names = PartitionNames(self._alias, self._granularity)
        return names.index(event.timestamp)

    def _ensure_partitions(self, indices: set[str]) -> dict[str, str]:
        """Make the partitions of `indices` not known to exist. Returns those that
        could not be made, each with the reason its events are refused: Elasticsearch
        refused to create it (a shard limit, a missing privilege), or it would pass
        `max_new_partitions`. Their events are refused; the others are written. A
        refused partition is tried again by the next write that needs it, so writes
        recover by themselves once the cause is gone."""
        refused: dict[str, str] = {}
        for index in sorted(indices - self._partitions_made):
            limit = self.options.max_new_partitions
            if self._partitions_created >= limit:
                refused[index] = (
                    f"its partition {index} would be one more than the {limit} new "
                    "partitions one run or request may create; raise --max-new-partitions "
                    "(SESSION_RECALL_MAX_NEW_PARTITIONS) if these times are right"
                )
                continue
            try:
                made = call_with_retries(
                    functools.partial(self._ensure_partition, index),
                    policy=self.options.retry,
                    what=f"create the partition {index}",
                    sleep=self._sleep,
                    deadline=self._deadline,
                )
            except ApiError as err:
                reason = refusal_reason(err)
                if err.status_code == 403:
                    self._forbidden(f"create the partition {index}", reason)
                if index not in self.refused_partitions:  # once per partition and outage
                    log.error("Elasticsearch refused to create the partition %s: %s", index, reason)
                self.refused_partitions[index] = reason
                refused[index] = (
                    f"its partition {index} could not be created: Elasticsearch answered "
                    f"{reason}; once the cluster can take a new index (free shards, or "
                    "the ingest role's privileges granted), send it again"
                )
                continue
            if self.refused_partitions.pop(index, None) is not None:
                log.info("the partition %s was created; its events are stored again", index)
            self._partitions_created += made
            self._partitions_made.add(index)
        return refused

    def _ensure_partition(self, index: str) -> bool:
        return ensure_partition(self._es(), self._alias, index)

    def _check_index(self) -> None:
        """Once per writer, before its first write: the index takes this model's vectors."""
        if self._index_checked or self._embedder is None:
            return
        embedder = self._embedder
        refusal = self._read(
            lambda: check_index(self._es(), self._alias, embedder), "read the index mapping"
        )
        if refusal is not None:
            log.warning("storing events without vectors: %s", refusal)
            self._vectors_refused = True
        self._index_checked = True

    def refresh(self, *, deadline: Deadline | None = None) -> None:
        """Make everything written so far searchable now, rather than within the index's
        refresh interval (1 s). Raises `WriteUnavailable` when Elasticsearch stays away
        (or past `deadline`)."""
        call_with_retries(
            lambda: bounded(self._client, deadline).indices.refresh(index=self._alias),
            policy=self.options.retry,
            what="refresh the alias",
            sleep=self._sleep,
            deadline=deadline,
        )

    def erasures(
        self, scope_ids: Collection[str], *, deadline: Deadline | None = None
    ) -> dict[str, int]:
        """The tombstones of `scope_ids`, read now and in real time: each erased scope
        with its erasure's instant in nanoseconds (`tombstones.erased_at`)."""
        self._deadline = deadline

        def read() -> dict[str, int]:
            if not self._tombstones_seen:
                if not tombstones.index_exists(self._es(), self._alias):
                    return {}
                self._tombstones_seen = True
            return tombstones.erased_at(self._es(), self._alias, scope_ids, index_seen=True)

        return self._read(read, "read the tombstones")

    def take_back(self, events: Sequence[Event], *, deadline: Deadline | None = None) -> int:
        """Delete the documents that a write of `events` made: for a caller whose write
        must be all or nothing, and whose event ids nobody else writes (erasure is how
        anyone else removes events). Returns how many deletes were refused; 0 means
        none of `events` is stored any more (once refreshed)."""
        self._deadline = deadline
        self._check_layout()
        actions = [
            _delete(*_copy_of(document))
            for event in events
            if isinstance(document := self.document(event), Document)
        ]
        if not actions:
            return 0
        return sum(answer.status not in (200, 404) for answer in self._send(actions))

    def _prepare(self, submission: Submission) -> _Pending:
        event = submission.event
        item = _Pending(submission, None, scope_ids_of(event))
        document = self.document(event, kept=submission.kept)
        if isinstance(document, EventResult):
            item.result = document
        else:
            item.document = document
            item.size = document.size
        return item

    def document(
        self, event: Event, *, kept: dict[str, Any] | None = None
    ) -> Document | EventResult:
        """`event`'s create action (with the `kept` fields, see `Submission`), or its
        refusal: metadata or a payload that JSON cannot hold (named, see `unstorable`),
        or an action over the chunk's bytes."""
        try:
            document = to_document(event, index=self._partition(event), identity=self._identity)
            if kept:
                document = document.extended(kept)
        except TypeError:
            return _rejected(event, unstorable(event))
        if document.size > self.options.chunk_bytes:
            reason = f"is {document.size} bytes, over the {self.options.chunk_bytes}-byte limit"
            return _rejected(event, f"event {reason}")
        return document

    def batch_builder(self, *, limits: EventLimits | None, max_line_bytes: int) -> "Builder":
        """A native builder of batches for `write_batches`, sized by this writer's
        options. Raises `RuntimeError` when the native core is not available.

        Safe to call from another thread than the writing one once the layout is
        known (`layout_known`), as `document` is: neither then asks Elasticsearch."""
        self._check_layout()
        assert self._granularity is not None  # _check_layout raises otherwise
        rules = self._batch_rules
        if rules is None or rules.limits is not limits:
            rules = self._batch_rules = native.Rules(
                alias=self._alias,
                granularity=self._granularity,
                identity=self._identity,
                limits=limits,
            )
        return rules.builder(
            max_count=self.options.chunk_events,
            max_bytes=self.options.chunk_bytes,
            max_line_bytes=max_line_bytes,
        )

    @property
    def layout_known(self) -> bool:
        """The alias's partition period is known: writing needs no read of it first."""
        return self._granularity is not None

    def check_layout(self, *, deadline: Deadline | None = None) -> None:
        """Read the alias's partition period, when not known yet. Raises `AliasMissing`
        when the alias has no partitioned layout, `WriteUnavailable` when
        Elasticsearch stays away (or past `deadline`)."""
        self._deadline = deadline
        self._check_layout()

    def _write_chunk(self, chunk: list[_Pending]) -> None:
        live = [p for p in chunk if p.result is None]
        if not live:
            return
        erased = self._erased(_ChunkScopes(live), reuse=True)  # (a)
        to_send: list[tuple[_Pending, Document]] = []
        refused: list[tuple[_Copy, int]] = []
        for p in live:
            if erased and _covered(p, erased):
                p.result = _rejected(p.submission.event, SCOPE_ERASED)
                if p.document is not None:
                    refused.append((_copy_of(p.document), _erased_until(p.scopes, erased)))
            elif p.document is not None:
                to_send.append((p, p.document))
        self._delete_copies(refused)
        if not to_send:
            return
        unmade = self._ensure_partitions({doc.index for _, doc in to_send})
        if unmade:
            for p, doc in to_send:
                if doc.index in unmade:
                    p.result = _rejected(p.submission.event, unmade[doc.index])
            to_send = [(p, doc) for p, doc in to_send if doc.index not in unmade]
            if not to_send:
                return
        to_send = self._with_vectors(to_send)
        creates = [(doc.header_json, doc.body) for _, doc in to_send]
        responses = self._send(creates)  # (b)
        stored: list[tuple[_Pending, Document]] = []
        for entry, response in zip(to_send, responses, strict=True):
            p, doc = entry
            if 200 <= response.status < 300:  # most: no call to word the result
                p.result = EventResult(_INDEXED, p.submission.event.event_id)
            else:
                p.result = self._result(p.submission.event.event_id, doc.index, response)
                if not p.result.stored:
                    continue
            stored.append(entry)
        self._undo_erased(stored)  # (c)

    def _with_vectors(
        self, to_send: list[tuple[_Pending, Document]]
    ) -> list[tuple[_Pending, Document]]:
        if self._embedder is None:
            return to_send
        if self._vectors_refused:
            self.without_vectors += len(to_send)
            return to_send
        documents, error = vectors.with_vectors(
            self._embedder,
            [doc for _, doc in to_send],
            [p.submission.event.text for p, _ in to_send],
        )
        if error is not None:
            self.without_vectors += len(to_send)
            if not self._embedder_failing:  # once per outage, not once per chunk
                log.warning("storing events without vectors: %s", error)
        elif self._embedder_failing:
            log.info("the embedder answers again; events are stored with vectors")
        self._embedder_failing = error is not None
        return [(p, doc) for (p, _), doc in zip(to_send, documents, strict=True)]

    def _undo_erased(self, stored: list[tuple[_Pending, Document]]) -> None:
        if not stored:
            return
        erased = self._erased(_ChunkScopes([p for p, _ in stored]))
        if not erased:
            return
        covered = [entry for entry in stored if _covered(entry[0], erased)]
        if not covered:
            return
        # Only what this write created: a copy that was there already (409) may be
        # another event of the same id, stamped after the erasure, and one stored
        # before the tombstone is the erasure's to remove.
        doomed = [
            (p, doc) for p, doc in covered if p.result is not None and p.result.status is _INDEXED
        ]
        if doomed:
            self._delete([_delete(*_copy_of(doc)) for _, doc in doomed])
        for p, _ in covered:
            p.result = _rejected(p.submission.event, SCOPE_ERASED)

    def _write_batch(self, batch: "Batch") -> dict[int, EventResult]:
        """(a), (b) and (c) of the module's text for a native batch: the results of its
        events that were not indexed, by position."""
        results: dict[int, EventResult] = {}
        if not len(batch):
            return results  # lines all refused or blank: nothing to write
        erased = self._erased(_BatchScopes(batch), reuse=True)  # (a)
        if erased:
            for position in batch.covered(erased):
                results[position] = _refused(batch.event_id(position), SCOPE_ERASED)
            self._delete_copies(
                [(_copy_in(batch, p), _erased_until(_scopes_in(batch, p), erased)) for p in results]
            )
        if len(results) == len(batch):
            return results
        unmade = self._ensure_partitions(set(batch.indices()))
        if unmade:
            for position in range(len(batch)):
                index = _copy_in(batch, position)[0]
                if position not in results and index in unmade:
                    results[position] = _refused(batch.event_id(position), unmade[index])
            if len(results) == len(batch):
                return results
        # Positions in the batch of the actions sent (all of them, but for a refusal).
        sent = [p for p in range(len(batch)) if p not in results] if results else None

        def body_for(pending: list[int]) -> bytes:
            if sent is None:
                return batch.body(None if len(pending) == len(batch) else pending)
            return batch.body([sent[i] for i in pending])

        count = len(batch) if sent is None else len(sent)
        answers = bulk.send_creates(  # (b)
            self._client,
            count,
            body_for,
            policy=self.options.retry,
            stats=self.stats,
            sleep=self._sleep,
            deadline=self._deadline,
        )
        for local, response in answers.items():
            position = local if sent is None else sent[local]
            index = orjson.loads(batch.header(position))["create"]["_index"]
            results[position] = self._result(batch.event_id(position), index, response)
        erased = self._erased(_BatchScopes(batch))  # (c)
        if erased:
            covered = [p for p in batch.covered(erased) if p not in results or results[p].stored]
            doomed = [p for p in covered if p not in results]  # created by this write: see (c)
            if doomed:
                self._delete([_delete(*_copy_in(batch, p)) for p in doomed])
            for p in covered:
                results[p] = _refused(batch.event_id(p), SCOPE_ERASED)
        return results

    def _delete_copies(self, refused: list[tuple["_Copy", int]]) -> None:
        """Delete the stored copies of events refused at (a): left behind by a write
        whose check (c) never completed. Each comes with the instant its erasure
        covers, and a copy stamped after it is kept: it is another event that reuses
        the id (a replay must never delete a newer event). They are looked up first,
        in each event's own partition and in any index of the single-index layout
        behind the alias, with a realtime `mget`:
        a blind delete of each would leave a deletion marker per event and index on
        every replay of an erased scope, and almost all of them find nothing."""
        if not refused:
            return
        found = self._read(lambda: self._copies(refused), "look for copies of erased events")
        if found is None:
            log.warning(_COPIES_KEPT, len(refused), "may not look for them")
        elif found:
            self._delete([_delete(*copy) for copy in found])

    def _delete(self, actions: list[bulk.Action]) -> None:
        """Delete stored copies of erased events; a credential that may not delete
        (the ingest role) leaves them to the next erasure, and says so."""
        refused = sum(answer.status == 403 for answer in self._send(actions))
        if refused:
            log.warning(_COPIES_KEPT, refused, "may not delete them")

    def _copies(self, refused: list[tuple["_Copy", int]]) -> list[tuple[str, str, str]] | None:
        """The stored copies of `refused` (see `_delete_copies`); None when these
        credentials may not look for them (the ingest role reads no event)."""
        es = self._es()
        try:
            indices = sorted(es.indices.get_alias(name=self._alias).body)
            legacy = [index for index in indices if parse_partition(self._alias, index) is None]
            docs = [
                ({"_index": index, "_id": doc_id, "routing": routing}, until)
                for (own, doc_id, routing), until in refused
                for index in [own, *legacy]
                if index in indices
            ]
            return _found(es, docs) if docs else []
        except NotFoundError:
            return []  # no alias, no copies (and the next bulk says what is wrong)
        except AuthorizationException:
            return None

    def _erased(self, scopes: "_Scopes", *, reuse: bool = False) -> dict[str, int]:
        """When each of the `scopes` with a tombstone was erased. With `reuse`, the
        last read answers if it is recent enough and holds all a new one would find.

        An event's own scope is asked for only where an event may have been erased on
        its own: once one was behind the alias (`ANY_EVENT_ERASED`, asked every time),
        for the events of the users with a marker (`events_marker`); for every event
        while some event tombstone may lack its user's marker (`ALL_MARKED` absent).
        So a read costs one id per user, session and contact, not one per event, but
        for users who had events erased one by one; and it can serve the next chunk."""
        last = self._last_read
        if (
            reuse
            and last is not None
            and time.monotonic() - last.sent_at <= self.options.tombstone_reuse_s
            and last.answers(scopes)
        ):
            return last.erased

        def ask(ids: Collection[str]) -> dict[str, int]:
            return tombstones.erased_at(self._es(), self._alias, ids, index_seen=True)

        def read() -> dict[str, int]:
            sent_at = time.monotonic()
            if not self._tombstones_seen:
                # Looked for until it exists, then taken to: one request less per check.
                if not tombstones.index_exists(self._es(), self._alias):
                    self._last_read = _TombstoneRead(sent_at, None, {})
                    return {}
                self._tombstones_seen = True
            # Gathered only now: without a tombstone index there is nothing to ask.
            shared = scopes.shared()
            if not shared:
                return {}
            users = scopes.users()
            # What the last read found decides what is asked with the rest, in one
            # request; what this one finds may take a second request, and a third.
            markers_known = last is not None and last.events_erased and last.per_user
            every_event = last is not None and last.events_erased and not last.per_user
            asked = shared | {ANY_EVENT_ERASED, ALL_MARKED}
            if markers_known:
                asked |= {events_marker(user) for user in users}
            own_asked = scopes.own(None) if every_event else frozenset()
            erased = ask(asked | own_asked)
            events_erased = ANY_EVENT_ERASED in erased
            per_user = ALL_MARKED in erased
            marked: frozenset[str] = frozenset()
            own: frozenset[str] = frozenset()
            if events_erased and per_user:
                if not markers_known:
                    erased.update(ask({events_marker(user) for user in users}))
                marked = frozenset(user for user in users if events_marker(user) in erased)
                own = scopes.own(marked) if marked else frozenset()
            elif events_erased:
                own = scopes.own(None)  # tombstones of a release that wrote no markers
            if own - own_asked:
                erased.update(ask(own - own_asked))
            self._last_read = _TombstoneRead(
                sent_at,
                shared,
                erased,
                events_erased,
                per_user,
                users if events_erased and per_user else frozenset(),
                marked,
            )
            return erased

        return self._read(read, "read the tombstones")

    def _send(self, actions: Sequence[bulk.Action], **params: Any) -> list[ItemResponse]:
        return bulk.send(
            self._client,
            actions,
            policy=self.options.retry,
            stats=self.stats,
            sleep=self._sleep,
            deadline=self._deadline,
            **params,
        )

    def _read(self, func: Callable[[], T], what: str) -> T:
        """`func()`, a read the write needs, retried as a write is; a refusal that a
        retry cannot fix (a missing privilege, say) is a `WriteFailed` naming what was
        refused and why, never the client's own exception."""
        return call_or_refuse(
            func,
            policy=self.options.retry,
            alias=self._alias,
            what=what,
            role="ingest",
            refused=WriteFailed,
            forbidden=WriteFailed,
            hint="Check the alias, then send the events again.",
            sleep=self._sleep,
            deadline=self._deadline,
        )

    def _es(self) -> Elasticsearch:
        """The client, its request timeout cut to what the write's deadline leaves."""
        return bounded(self._client, self._deadline)

    def _result(self, event_id: str, index: str, response: ItemResponse) -> EventResult:
        if 200 <= response.status < 300:
            return EventResult(_INDEXED, event_id)
        if response.status == 409:
            return EventResult(_ALREADY_PRESENT, event_id)
        if response.status == 404 and "index_not_found" in (response.error or ""):
            self._partitions_made.discard(index)  # pruned: made again next time
            raise AliasMissing(
                f"The partition {index} of {self._alias!r} went away, and the "
                "cluster does not create indices on write.",
                hint=f"Run `session-recall --index {self._alias} setup` first.",
            )
        if response.status == 403:
            self._forbidden(f"store the event {event_id!r} in {index}", str(response.error))
        reason = f"Elasticsearch refused it ({response.status}): {response.error}"
        if "strict_dynamic_mapping_exception" in (response.error or ""):
            reason += (
                f"; an index of {self._alias!r} predates a field of this release: run "
                "`session-recall setup` once (it adds the fields), then send it again"
            )
        return _refused(event_id, reason)

    def _forbidden(self, what: str, reason: str) -> None:
        """A refusal for want of a privilege: raised when the caller wants it so."""
        if self._stop_when_forbidden is not None:
            raise PrivilegeMissing(
                f"Elasticsearch refused to {what} (403): {reason}.",
                hint=role_hint(self._stop_when_forbidden),
            )


_size = operator.attrgetter("size")
_INDEXED, _ALREADY_PRESENT = Status.INDEXED, Status.ALREADY_PRESENT


def _covered(pending: _Pending, erased: dict[str, int]) -> bool:
    """A tombstone of one of the event's scopes was erased at or after its timestamp."""
    stamp = pending.submission.event.timestamp.nanos
    return any(stamp <= erased.get(scope, -1) for scope in pending.scopes)


def _found(
    client: Elasticsearch, docs: list[tuple[dict[str, str], int]]
) -> list[tuple[str, str, str]] | None:
    """(index, id, routing) of the `docs` that exist, read in real time, and stamped at
    or before the instant each comes with (nanoseconds); None when these credentials
    may not read them (the ingest role: each document is refused in the answer)."""
    response = client.mget(
        docs=[doc for doc, _ in docs],
        source_includes=["timestamp"],
        realtime=True,
        filter_path="docs._index,docs._id,docs.found,docs._source,docs.error.type",
    )
    found = []
    for (asked, until), doc in zip(docs, response.body.get("docs", ()), strict=True):
        if doc.get("found"):
            stamp = doc.get("_source", {}).get("timestamp")
            if stamp is not None and Instant.parse(stamp).nanos > until:
                continue  # another event of the same id, stamped after the erasure
            found.append((asked["_index"], asked["_id"], asked["routing"]))
        elif "error" in doc and doc["error"].get("type") == "security_exception":
            return None
        elif "error" in doc and doc["error"].get("type") not in _NO_COPY_THERE:
            raise Transient(f"looking for a stored copy failed: {doc['error'].get('type')}")
    return found


def _results(chunk: list[_Pending]) -> list[Written]:
    written = []
    for item in chunk:
        assert item.result is not None  # every item of a written chunk has one
        written.append(Written(item.submission, item.result))
    return written


def _rejected(event: Event, reason: str) -> EventResult:
    return _refused(event.event_id, reason)


def _refused(event_id: str, reason: str) -> EventResult:
    return EventResult(Status.REJECTED, event_id, reason)


# A stored copy of a document, as a delete or a lookup names it: (index, _id, routing).
_Copy = tuple[str, str, str]


def _copy_of(document: Document) -> _Copy:
    return document.index, document.id, document.routing


def _copy_in(batch: "Batch", position: int) -> _Copy:
    header = orjson.loads(batch.header(position))["create"]
    return header["_index"], header["_id"], header["routing"]


def _erased_until(scopes: Iterable[str], erased: dict[str, int]) -> int:
    """The latest erasure among `scopes`: what an event of them refused covers."""
    return max((erased.get(scope, -1) for scope in scopes), default=-1)


def _scopes_in(batch: "Batch", position: int) -> tuple[str, ...]:
    """The scopes of a batch's event, from its line (for the rare event refused as
    erased: the batch keeps its scopes for all its events, not by position)."""
    # Validated as the model, not held to the input's limits again: it was taken.
    return scope_ids_of(Event.model_validate(strict_json.loads(batch.source(position))))


def _delete(index: str, doc_id: str, routing: str) -> bulk.Action:
    return {"delete": {"_index": index, "_id": doc_id, "routing": routing}}, None


class _ChunkScopes:
    """The scopes of a chunk's events (`_Scopes`): each event's are its user's first
    and its own last (`scope_ids_of`)."""

    def __init__(self, items: Sequence[_Pending]) -> None:
        self._items = items

    @functools.cached_property
    def _shared(self) -> frozenset[str]:
        return frozenset(scope for item in self._items for scope in item.scopes[:-1])

    def shared(self) -> frozenset[str]:
        return self._shared

    @functools.cached_property
    def _users(self) -> frozenset[str]:
        return frozenset(item.scopes[0] for item in self._items)

    def users(self) -> frozenset[str]:
        return self._users

    def own(self, users: frozenset[str] | None) -> frozenset[str]:
        return frozenset(
            item.scopes[-1] for item in self._items if users is None or item.scopes[0] in users
        )


class _BatchScopes:
    """The scopes of a native batch's events (`_Scopes`)."""

    def __init__(self, batch: "Batch") -> None:
        self._batch = batch

    @functools.cached_property
    def _shared(self) -> frozenset[str]:
        return shared_scopes(self._batch.scopes())

    def shared(self) -> frozenset[str]:
        return self._shared

    @functools.cached_property
    def _users(self) -> frozenset[str]:
        return frozenset(self._batch.user_scopes())

    def users(self) -> frozenset[str]:
        return self._users

    def own(self, users: frozenset[str] | None) -> frozenset[str]:
        if users is None:
            return frozenset(self._batch.scopes()) - self._shared
        return frozenset(self._batch.own_scopes_of(set(users)))


U = TypeVar("U")
R = TypeVar("R")


def _pipelined(units: Iterable[U | Flush], write: Callable[[U], R]) -> Iterator[tuple[U, R]]:
    """Each unit with what `write` made of it, in order. One unit is written in a
    worker thread while the next is made here (by the iterable): Elasticsearch indexes
    while Python prepares, instead of each waiting for the other. A unit is handed to
    the worker only once the next one is ready to be made meanwhile: a write of one
    unit (a `serve` batch, a burst before a `FLUSH`) is done in the calling thread, with
    no thread to start or wake. A `FLUSH` answers everything held back at once."""
    held: tuple[U] | None = None  # made, not sent yet
    in_flight: tuple[U, Future[R]] | None = None
    worker: ThreadPoolExecutor | None = None
    try:
        for unit in units:
            if isinstance(unit, Flush):
                # Nothing more for now: answer without waiting for more input, even
                # when the burst ended exactly on a unit's boundary.
                if in_flight is not None:
                    yield in_flight[0], in_flight[1].result()
                    in_flight = None
                if held is not None:
                    yield held[0], write(held[0])
                    held = None
                continue
            if held is not None:
                if worker is None:
                    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bulk")
                sent = (held[0], worker.submit(write, held[0]))
                if in_flight is not None:
                    yield in_flight[0], in_flight[1].result()  # re-raises the worker's error
                in_flight = sent
            held = (unit,)
        if in_flight is not None:
            yield in_flight[0], in_flight[1].result()
        if held is not None:
            yield held[0], write(held[0])
    finally:
        if worker is not None:
            worker.shutdown()
