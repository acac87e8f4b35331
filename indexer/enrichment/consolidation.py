"""Consolidation: a user's new events mined into kept memories, pass after pass.

A pass over a user reads the events stored since that user's last pass, in the events'
total order (`core.order`), a page at a time (so a first pass over a long history
streams, in bounded memory), runs the built-in miner on each page (`miner.mine`),
and saves each candidate (`MemoryWriter.save_resolved`, origin "miner en-2") after
asking the miner's superseding which of the user's current memories it replaces
(`superseding.superseded_by`). After each page the user's checkpoint moves past it.

The checkpoint is a document of `ALIAS-consolidation` per user, holding a position per
slice of the sessions (`slices`, the 16 of the leases): consolidators share an alias
as enrichers do, by leases on slices (`leases.Leased`, work "consolidation"), so two
of them mine each event once, and one that takes a slice over from another resumes
at its position. A memory's id is a digest of what it says and where from, written
with `create`: an event mined twice (a pass that stopped between its save and its
checkpoint) still gives one memory.

An event stored late, stamped before a slice's checkpoint, is not mined: the pass is
the periodic `since` pass of a background agent.

With a `ModelMiner` (SESSION_RECALL_MINER=model) the user turns go to a model instead,
a batch at a time, with the user's nearest current memories; the operations it returns
(add, supersede, retire), checked first (`mining_answer`), are applied through the same
writer, origin "model NAME". When the model fails, the user's checkpoint stays before
the batch: its turns are mined again next pass, and the summary says why.
"""

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from elasticsearch import ConflictError, Elasticsearch, NotFoundError
from pydantic import BaseModel

from session_recall.core.digest import digest
from session_recall.core.index_names import consolidation_index, memory_index
from session_recall.core.instant import Instant
from session_recall.core.order import event_order
from session_recall.core.user_filter import user_filter
from session_recall.embeddings import Embedder
from session_recall.indexer.enrichment.leases import SLICES, Leased
from session_recall.indexer.enrichment.memories import (
    MemoriesMissing,
    MemoryRefused,
    MemoryWriter,
    SourceEvent,
)
from session_recall.indexer.enrichment.miner import (
    MINER_VERSION,
    USER_TYPES,
    Candidate,
    Turn,
    mine,
)
from session_recall.indexer.enrichment.mining_answer import MinerFailed, Retire, Supersede
from session_recall.indexer.enrichment.model_miner import ModelMiner
from session_recall.indexer.enrichment.slices import Slice, slices_query
from session_recall.indexer.enrichment.superseding import Current, superseded_by
from session_recall.indexer.retry import RetryPolicy, call_with_retries
from session_recall.indexer.tombstones import create_unless_exists

log = logging.getLogger(__name__)

ORIGIN = f"miner {MINER_VERSION}"
DEFAULT_PAGE = 500
# The current memories superseding looks among, newest first: enough for every subject
# a user keeps, and a bound on what a pass holds.
_CURRENT = 1000
_USERS_PAGE = 500
_SOURCE = ["event_id", "user_id", "session_id", "timestamp", "type", "text", "slot"]
_MAPPING = {
    "dynamic": "strict",
    "properties": {
        "user_id": {"type": "keyword"},
        "positions": {"type": "object", "enabled": False},
        "updated": {"type": "date_nanos"},
    },
}
_SETTINGS = {"number_of_shards": 1, "auto_expand_replicas": "0-1"}
_ALL = tuple(Slice(k, SLICES) for k in range(SLICES))

Position = tuple[int, str]  # an event's timestamp (epoch nanoseconds) and event_id


class ConsolidationSummary(BaseModel):
    """Counts of a pass: users looked at, events mined, memories saved (new ones),
    superseded, retired, candidates whose source was erased meanwhile; with a model,
    the operations it returned that were not valid (dropped), and the users whose
    new events it failed to mine (`model_failed`, the last cause in `model_failure`)."""

    users: int = 0
    events: int = 0
    candidates: int = 0
    saved: int = 0
    superseded: int = 0
    retired: int = 0
    refused: int = 0
    dropped: int = 0
    model_failed: int = 0
    model_failure: str | None = None
    interrupted: bool = False

    def line(self) -> str:
        text = (
            f"{self.events} new event(s) of {self.users} user(s) mined: "
            f"{self.saved} memory(ies) kept, {self.superseded} superseded"
        )
        if self.retired:
            text += f", {self.retired} retired"
        if self.refused:
            text += f", {self.refused} dropped (a source was erased meanwhile)"
        if self.dropped:
            text += (
                f", {self.dropped} operation(s) of the model dropped (not valid for the "
                "turns and memories it was given)"
            )
        if self.model_failed:
            text += (
                f"; the model miner failed for {self.model_failed} user(s) "
                f"({self.model_failure}): their new events are left for the next pass"
            )
        if self.interrupted:
            text += "; stopped before the end (run it again to go on)"
        return text + "."


class Consolidator:
    """Mines users' new events into memories on one alias. With `leases`, it mines the
    slices it holds (shared with the alias's other consolidators); without, every slice."""

    def __init__(
        self,
        client: Elasticsearch,
        alias: str,
        *,
        embedder: Embedder | None = None,
        page_size: int = DEFAULT_PAGE,
        leases: Leased | None = None,
        stop: threading.Event | None = None,
        miner: ModelMiner | None = None,
    ) -> None:
        self._client = client
        self._miner = miner  # None: the built-in miner
        self._alias = alias
        self._embedder = embedder
        self._page = page_size
        self._leases = leases
        self._stop = stop or threading.Event()
        self._ready = False
        self._policy = RetryPolicy()

    def run(self, *, user_id: str | None = None) -> ConsolidationSummary:
        """One pass: over `user_id`, or over every user with events (None)."""
        self._ensure_index()
        summary = ConsolidationSummary()
        held = _ALL
        if self._leases is not None:
            self._leases.take()
            held = tuple(sorted(self._leases.held))
        if not held:
            return summary
        users = [user_id] if user_id is not None else self._users()
        for user in users:
            if self._stopped():
                summary.interrupted = True
                break
            summary.users += 1
            self._user_pass(user, held, summary)
        return summary

    def stop_on(self, stop: threading.Event) -> None:
        """Stop between two pages once `stop` is set."""
        self._stop = stop

    def leave(self) -> None:
        if self._leases is not None:
            self._leases.leave()

    def _stopped(self) -> bool:
        return self._stop.is_set() or (self._leases is not None and not self._leases.keeps())

    def _users(self) -> Iterator[str]:
        """Every user with stored events, a page of the composite aggregation at a time."""
        after: dict[str, Any] | None = None
        while True:
            composite: dict[str, Any] = {
                "size": _USERS_PAGE,
                "sources": [{"user": {"terms": {"field": "user_id"}}}],
            }
            if after is not None:
                composite["after"] = after
            try:
                answer = self._client.search(
                    index=self._alias, size=0, aggs={"users": {"composite": composite}}
                ).body
            except NotFoundError:
                return
            found = answer["aggregations"]["users"]
            for bucket in found["buckets"]:
                yield str(bucket["key"]["user"])
            after = found.get("after_key")
            if not found["buckets"] or after is None:
                return

    def _user_pass(self, user: str, held: tuple[Slice, ...], summary: ConsolidationSummary) -> None:
        positions, version = self._checkpoint(user)
        origin = ORIGIN if self._miner is None else self._miner.origin
        writer = MemoryWriter(
            self._client, self._alias, user_id=user, embedder=self._embedder, origin=origin
        )
        current = self._current(user) if self._miner is None else []
        for page in self._new_events(user, held, positions):
            for hits in self._batches(page):
                by_event = {str(h["_source"]["event_id"]): h for h in hits}
                if self._miner is None:
                    for candidate in mine([_turn(h) for h in hits]):
                        summary.candidates += 1
                        self._keep(writer, candidate, by_event, current, summary)
                else:
                    try:
                        self._apply_model(self._miner, writer, by_event, summary)
                    except MinerFailed as err:
                        # The checkpoint stays before this batch: mined again next pass.
                        summary.model_failed += 1
                        summary.model_failure = str(err)
                        log.warning("the model miner failed (%s); its turns wait", err)
                        return
                summary.events += len(hits)
                for hit in hits:
                    slot = hit["_source"].get("slot")
                    piece = _ALL[0] if slot is None else _slice_of(int(slot))
                    positions[str(piece.index)] = [int(hit["sort"][0]), str(hit["sort"][1])]
                version = self._save_checkpoint(user, positions, version)
                if self._stopped():
                    summary.interrupted = True
                    return

    def _batches(self, page: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
        """The page whole for the built-in miner; a model's requests, a batch each."""
        size = len(page) if self._miner is None else self._miner.batch_size
        for start in range(0, len(page), max(size, 1)):
            yield page[start : start + size]

    def _apply_model(
        self,
        miner: ModelMiner,
        writer: MemoryWriter,
        by_event: dict[str, dict[str, Any]],
        summary: ConsolidationSummary,
    ) -> None:
        """The model's operations on the batch's user turns, through the writer."""
        turns = [_turn(h) for h in by_event.values() if h["_source"].get("type") in USER_TYPES]
        if not turns:
            return
        found = miner.operations(writer.user_id, turns)
        summary.dropped += found.dropped
        for operation in found.operations:
            summary.candidates += 1
            try:
                if isinstance(operation, Retire):
                    writer.retire_memory(operation.memory_id, operation.reason)
                    summary.retired += 1
                    continue
                replaced = operation.memory_id if isinstance(operation, Supersede) else None
                saved = writer.save_resolved(
                    operation.statement, operation.kind,
                    [_source(by_event[e]) for e in dict.fromkeys(operation.sources)],
                    supersedes=replaced, subject=operation.subject,
                )  # fmt: skip
            except MemoryRefused as err:
                summary.refused += 1
                log.info("a memory the model mined was not kept: %s", err)
                continue
            if saved.created:
                summary.saved += 1
                summary.superseded += len(saved.superseded)

    def _keep(
        self,
        writer: MemoryWriter,
        candidate: Candidate,
        by_event: dict[str, dict[str, Any]],
        current: list[Current],
        summary: ConsolidationSummary,
    ) -> None:
        sources = [_source(by_event[event_id]) for event_id in candidate.sources]
        replaced = superseded_by(candidate, current)
        try:
            saved = writer.save_resolved(
                candidate.statement, candidate.kind, sources, supersedes=replaced,
                subject=candidate.subject,
            )  # fmt: skip
        except MemoryRefused as err:
            summary.refused += 1
            log.info("a mined memory was not kept: %s", err)
            return
        if not saved.created:
            return
        summary.saved += 1
        summary.superseded += len(saved.superseded)
        gone = set(saved.superseded)
        current[:] = [m for m in current if m.memory_id not in gone]
        memory = saved.memory
        current.append(
            Current(memory.memory_id, memory.kind, memory.subject, memory.statement,
                    _datetime(memory.valid_from))
        )  # fmt: skip

    def _new_events(
        self, user: str, held: tuple[Slice, ...], positions: dict[str, Any]
    ) -> Iterator[list[dict[str, Any]]]:
        """Pages of `user`'s events in the slices `held`, each after its slice's position."""
        clauses = []
        for piece in held:
            where = [slices_query([piece])]
            at = positions.get(str(piece.index))
            if at is not None:
                where.append(_after(int(at[0]), str(at[1])))
            clauses.append({"bool": {"filter": where}})
        query = {
            "bool": {
                "filter": [
                    *user_filter(user),
                    {"bool": {"should": clauses, "minimum_should_match": 1}},
                ]
            }
        }
        after: list[Any] | None = None
        while True:
            try:
                hits = self._client.search(
                    index=self._alias,
                    routing=user,
                    query=query,
                    sort=event_order(),
                    size=self._page,
                    source_includes=_SOURCE,
                    search_after=after,
                    track_total_hits=False,
                    allow_partial_search_results=False,
                ).body["hits"]["hits"]
            except NotFoundError:
                return
            if not hits:
                return
            yield hits
            after = hits[-1]["sort"]

    def _current(self, user: str) -> list[Current]:
        """The user's current memories that have a subject, newest first (bounded)."""
        query = {
            "bool": {
                "filter": [*user_filter(user), {"exists": {"field": "subject"}}],
                "must_not": [{"exists": {"field": "valid_to"}}],
            }
        }
        hits = self._client.search(
            index=memory_index(self._alias),
            routing=user,
            query=query,
            size=_CURRENT,
            sort=[{"valid_from": "desc"}, {"memory_id": "asc"}],
            source_includes=["memory_id", "kind", "subject", "statement", "valid_from"],
            track_total_hits=False,
        ).body["hits"]["hits"]
        return [
            Current(
                str(h["_source"]["memory_id"]), h["_source"]["kind"], h["_source"].get("subject"),
                str(h["_source"]["statement"]),
                _datetime(Instant.parse(str(h["_source"]["valid_from"]))),
            )
            for h in hits
        ]  # fmt: skip

    def _checkpoint(self, user: str) -> tuple[dict[str, Any], tuple[int, int] | None]:
        """The user's positions by slice, and the version they were read at."""
        index, wanted = consolidation_index(self._alias), _checkpoint_id(user)
        try:
            # Retried: a checkpoint index made a moment ago may answer 503 while its shard
            # finishes recovering, and a busy node 429.
            found = call_with_retries(
                lambda: self._client.get(index=index, id=wanted, realtime=True).body,
                policy=self._policy, what="read the consolidation checkpoint",
            )  # fmt: skip
        except NotFoundError:
            return {}, None
        return dict(found["_source"].get("positions") or {}), (
            found["_seq_no"], found["_primary_term"]
        )  # fmt: skip

    def _save_checkpoint(
        self, user: str, positions: dict[str, Any], version: tuple[int, int] | None
    ) -> tuple[int, int] | None:
        """Write the positions; when another consolidator wrote meanwhile (its slices),
        keep its positions for the slices this one does not hold, and write again."""
        mine = dict(positions)
        for _attempt in range(10):
            body = {
                "user_id": user,
                "positions": positions,
                "updated": Instant.now().to_elasticsearch(),
            }
            where: dict[str, Any] = {
                "index": consolidation_index(self._alias),
                "id": _checkpoint_id(user),
            }
            conditions: dict[str, Any] = (
                {"op_type": "create"}
                if version is None
                else {"if_seq_no": version[0], "if_primary_term": version[1]}
            )
            try:
                answer = call_with_retries(
                    functools.partial(self._client.index, **where, document=body, **conditions),
                    policy=self._policy, what="save the consolidation checkpoint",
                )  # fmt: skip
                return int(answer["_seq_no"]), int(answer["_primary_term"])
            except ConflictError:
                theirs, version = self._checkpoint(user)
                positions = {**theirs, **mine}
        raise MemoryRefused(
            "The consolidation checkpoint kept changing under this pass.",
            hint="Run consolidate again: what it saved stays saved.",
        )

    def _ensure_index(self) -> None:
        if not self._ready:
            if not self._client.indices.exists(index=memory_index(self._alias)):
                raise MemoriesMissing(
                    f"{self._alias!r} has no memories index: it was set up by an earlier "
                    "release, or not at all.",
                    hint="Run `session-recall setup` once; it makes it.",
                )
            name = consolidation_index(self._alias)
            if not self._client.indices.exists(index=name):
                create_unless_exists(self._client, name, mappings=_MAPPING, settings=_SETTINGS)
            # Made a moment ago by another consolidator, it exists before its shard
            # answers: wait for it, rather than fail the first read of a checkpoint.
            self._client.cluster.health(index=name, wait_for_status="yellow", timeout="30s")
            self._ready = True


def follow(
    consolidator: Consolidator,
    *,
    stop: threading.Event,
    poll_seconds: float = 5.0,
    on_pass: Callable[[ConsolidationSummary], None] | None = None,
) -> None:
    """Pass after pass over every user until `stop` is set; a failure is logged and
    tried again after a pause. Its leases are given back at the end."""
    try:
        while not stop.is_set():
            try:
                summary = consolidator.run()
            except Exception as err:  # a follower outlives any one failure
                log.warning("consolidation pass failed (%s); trying again", err)
                stop.wait(min(poll_seconds * 4, 60.0))
                continue
            if on_pass is not None:
                on_pass(summary)
            if not summary.events or not summary.interrupted:
                stop.wait(poll_seconds)
    finally:
        try:
            consolidator.leave()
        except Exception as err:  # its leases lapse by themselves
            log.debug("could not give back the consolidation leases: %s", err)


@contextlib.contextmanager
def in_background(consolidator: Consolidator, *, poll_seconds: float = 5.0) -> Iterator[None]:
    """`follow` in a thread of its own while the block runs (serve's `--consolidate`);
    stopped, and its leases given back, when the block ends."""
    stop = threading.Event()
    consolidator.stop_on(stop)
    thread = threading.Thread(
        target=follow, args=(consolidator,), kwargs={"stop": stop, "poll_seconds": poll_seconds},
        name="session-recall-consolidator", daemon=True,
    )  # fmt: skip
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)


def _datetime(instant: Instant) -> datetime:
    """What the miner takes (microseconds: enough to order a user's turns)."""
    seconds, nanos = divmod(instant.nanos, 10**9)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=nanos // 1000)


def _checkpoint_id(user: str) -> str:
    return digest(["consolidation", user])


def _slice_of(slot: int) -> Slice:
    for piece in _ALL:
        low, high = piece.slots
        if low <= slot < high:
            return piece
    return _ALL[0]


def _after(nanos: int, event_id: str) -> dict[str, Any]:
    """Events after (timestamp, event_id) in the events' order, within one user."""
    stamp = Instant(nanos).to_elasticsearch()
    return {
        "bool": {
            "should": [
                {"range": {"timestamp": {"gt": stamp}}},
                {
                    "bool": {
                        "filter": [
                            {"term": {"timestamp": stamp}},
                            {"range": {"event_id": {"gt": event_id}}},
                        ]
                    }
                },
            ],
            "minimum_should_match": 1,
        }
    }


def _turn(hit: dict[str, Any]) -> Turn:
    source = hit["_source"]
    return Turn(
        event_id=str(source["event_id"]),
        timestamp=_datetime(Instant.parse(str(source["timestamp"]))),
        type=str(source.get("type") or ""),
        text=str(source.get("text") or ""),
        session_id=str(source.get("session_id") or ""),
    )


def _source(hit: dict[str, Any]) -> SourceEvent:
    return SourceEvent(
        str(hit["_source"]["event_id"]),
        str(hit["_id"]),
        Instant.parse(str(hit["_source"]["timestamp"])),
    )


__all__ = ["ORIGIN", "ConsolidationSummary", "Consolidator", "follow", "in_background"]
