"""What every framework adapter does with the library: store events so that they are
searchable when the call returns (all of them or none, when the caller needs it),
erase a scope, read when a scope was last erased and what instant an event already
has, and search one user's memory, each within a deadline, from worker threads (the
frameworks call from an event loop and hand the work to `asyncio.to_thread`).

An adapter-only deployment runs no `serve`: its store runs the enrichment pass in a
thread of its own from its first write (stems, context, and the vectors a model
change leaves missing), sharing the work with any other enricher of the alias by
leases, and stops it on `close()` (or at exit). `SESSION_RECALL_ENRICH=false` turns it
off, for a deployment that runs `session-recall embed --follow` or serve beside."""

import atexit
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Collection, Iterable, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

from elasticsearch import ApiError, Elasticsearch, TransportError

from session_recall.client import failover_only, make_async_client, make_client
from session_recall.config import Settings
from session_recall.core.errors import SessionRecallError
from session_recall.core.instant import Instant
from session_recall.factories import embedder_for, enricher_for, reranker_for
from session_recall.indexer import (
    Deadline,
    Enricher,
    Event,
    EventResult,
    IndexerError,
    MemoryWriter,
    Scope,
    Submission,
    Writer,
    after_removal,
    erase,
)
from session_recall.recall import (
    AsyncMemorySearcher,
    MemoriesSearcher,
    MemorySearcher,
    Searchers,
    SessionEvents,
    stored_instants,
)

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 10.0
_LOOKUP_IDS = 1000  # event ids one search of `instants_of` asks for


class EventStore:
    """One alias of one cluster, for an adapter. `settings` default to the
    environment's (`ELASTICSEARCH_URL`, credentials, `SESSION_RECALL_INDEX`...); `index`
    overrides the alias; `client` is the application's own client for the cluster
    (made from the settings otherwise). Thread-safe."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        index: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        client: Elasticsearch | None = None,
    ) -> None:
        settings = settings or Settings()
        if index is not None:  # checked as SESSION_RECALL_INDEX is: one concrete alias
            settings = settings.with_overrides(index=index)
        self.settings = settings
        self.alias = settings.index
        self.timeout = timeout
        self.client = client or make_client(
            settings, **failover_only(settings), request_timeout=timeout
        )
        # An endpoint's tries end within half the store's deadline: the write, and its
        # refresh, have the other half (an outage of the embedder stores without vectors).
        self.embedder = embedder_for(settings, within_s=timeout / 2)
        self.reranker = reranker_for(settings)
        self._writers = threading.local()

    def _writer(self) -> Writer:
        """The calling worker thread's writer (a writer is not thread-safe): it reads
        the alias's layout and learns its partitions once, not on every call."""
        writer: Writer | None = getattr(self._writers, "writer", None)
        if writer is None:
            writer = self._writers.writer = Writer(self.client, self.alias, embedder=self.embedder)
        return writer

    def store(self, events: Sequence[Event]) -> None:
        """Store `events`, searchable on return. An event already stored, or erased,
        is not stored again; any other refusal raises an `IndexerError` naming it
        (the others are stored)."""
        if not events:
            return
        self._enrich_in_background()
        deadline = Deadline.after(self.timeout)
        writer = self._writer()
        refused = [
            written.result
            for written in writer.write(map(Submission, events), deadline=deadline)
            if not written.result.stored and not written.result.erased
        ]
        writer.refresh(deadline=deadline)  # searchable when the call returns
        if refused:
            reasons = "; ".join(f"{r.event_id}: {r.reason}" for r in refused[:3])
            raise IndexerError(
                f"{len(refused)} of {len(events)} event(s) were refused: {reasons}.",
                hint="The others are stored; fix these and add them again.",
            )

    def _enrich_in_background(self) -> None:
        if self.settings.enrich:
            _ENRICHERS.join(self)

    def close(self) -> None:
        """Leave the background enrichment (the last store of the alias in this process
        stops it, and its leases go to the alias's other enrichers) and close the
        client and the embedder's connections. The store is not used afterwards."""
        _ENRICHERS.leave(self)
        self.client.close()
        _close(self.embedder)
        _close(self.reranker)

    def forget(self, user_id: str, ids: Collection[str]) -> None:
        """Rebuild, without them, the contexts that hold the events `ids` (`_id`s) of
        `user_id`, which the caller removed itself (a conditional delete). A failure is
        logged, not raised: what was removed stays removed, and its record makes the
        next erasure of the alias finish the rebuilding."""
        try:
            after_removal(self.client, self.alias, user_id, ids)
        except (SessionRecallError, ApiError, TransportError) as err:
            log.warning(
                "the contexts of the turns after a removed event were not rebuilt (%s); "
                "if its record was written, the next erasure of %r finishes it",
                err,
                self.alias,
            )

    def store_all(self, events: Sequence[Event]) -> None:
        """Store all of `events` or none of them, searchable on return. An event already
        stored, or erased, is not stored again. When any other is refused, before the
        write (too large, not JSON) or by Elasticsearch, or the write fails, what it
        stored is taken back and an `IndexerError` names the refused ones: the caller
        may fix them and add all again, nothing twice. For events of ids of their own,
        which no one else writes."""
        if not events:
            return
        self._enrich_in_background()
        deadline = Deadline.after(self.timeout)
        writer = self._writer()
        writer.check_layout(deadline=deadline)
        refused = [
            (position, document)
            for position, event in enumerate(events, 1)
            if isinstance(document := writer.document(event), EventResult)
        ]
        if not refused:
            try:
                written = writer.write(map(Submission, events), deadline=deadline)
                results = [w.result for w in written]
            except SessionRecallError:
                self._take_back(writer, events, failed=True)
                raise
            refused = [
                (position, result)
                for position, result in enumerate(results, 1)
                if not result.stored and not result.erased
            ]
            if refused:
                self._take_back(writer, events, failed=False)
            else:
                writer.refresh(deadline=deadline)  # searchable when the call returns
        if refused:
            reasons = "; ".join(f"#{position}: {r.reason}" for position, r in refused[:3])
            raise IndexerError(
                f"{len(refused)} of {len(events)} event(s) were refused ({reasons}); "
                "none was stored.",
                hint="Fix or leave out the ones named, then add them again.",
            )

    def _take_back(self, writer: Writer, events: Sequence[Event], *, failed: bool) -> None:
        """Delete what a write of `events` that must be all or nothing stored; says so
        when that fails too, since a retry would then store those events twice."""
        deadline = Deadline.after(self.timeout)
        try:
            kept = writer.take_back(events, deadline=deadline)
            writer.refresh(deadline=deadline)
        except SessionRecallError:
            kept = len(events)
        if kept:
            what = "The write failed" if failed else "Some events were refused"
            raise IndexerError(
                f"{what}, and up to {kept} event(s) it stored could not be taken back.",
                hint="Read what is stored before adding them again, or they may be "
                "stored twice; check the node.",
            )

    def last_erasure(self, scopes: Iterable[Scope]) -> Instant | None:
        """The instant of the latest erasure of any of `scopes` (None: never erased),
        read in real time: events stamped after it are kept, whatever this host's
        clock says of the host that erased."""
        erased = self._writer().erasures(
            {scope.id for scope in scopes}, deadline=Deadline.after(self.timeout)
        )
        return Instant.clamped(max(erased.values())) if erased else None

    def instants_of(
        self, user_id: str, event_ids: Collection[str], *, session_id: str | None = None
    ) -> dict[str, Instant]:
        """For events that carry no instant of their own: the instant each of
        `event_ids` of `user_id` already has. That is its stored copy's (the earliest,
        in `session_id` when given), or for one erased on its own (`Scope.event`) and
        not stored since, its erasure's, at which the writer refuses it. Ids with
        neither are left out."""
        ids = sorted(set(event_ids))
        if not ids:
            return {}
        deadline = Deadline.after(self.timeout)
        found: dict[str, Instant] = {}
        for start in range(0, len(ids), _LOOKUP_IDS):
            found |= stored_instants(
                self.client, self.alias, user_id, ids[start : start + _LOOKUP_IDS],
                session_id=session_id, timeout=deadline.remaining(),
            )  # fmt: skip
        unseen = [event_id for event_id in ids if event_id not in found]
        scopes = {Scope.event(user_id, event_id).id: event_id for event_id in unseen}
        if scopes:
            for scope_id, nanos in self._writer().erasures(scopes, deadline=deadline).items():
                found[scopes[scope_id]] = Instant.clamped(nanos)
        return found

    def session_events(self, user_id: str, session_id: str) -> SessionEvents:
        """The events of one session of `user_id`, read within the store's deadline."""
        return SessionEvents(
            self.client, self.alias, user_id=user_id, session_id=session_id, timeout=self.timeout
        )

    def erase(self, scope: Scope) -> None:
        """Erase `scope` through the erasure path (its tombstone keeps replays out)."""
        erase(self.client, self.alias, scope, deadline=Deadline.after(self.timeout))

    def memory(self, user_id: str) -> MemorySearcher:
        """memory_search bound to `user_id`."""
        return MemorySearcher(self.client, **self._memory_options(user_id))

    @cached_property
    def searchers(self) -> Searchers:
        """Every searcher of the alias (cross_session_search's among them), each bound
        to a user when asked for one; cursors signed with the settings' key."""
        return Searchers(
            client=self.client,
            alias=self.alias,
            cursor_key=self.settings.signing_key(),
            embedder=self.embedder,
            search_timeout=self.timeout,
        )

    def memories(self, user_id: str) -> MemoriesSearcher:
        """The kept memories of `user_id`: search and list."""
        return self.searchers.memories(user_id=user_id)

    def keyword_memories(self, user_id: str) -> MemoriesSearcher:
        """The kept memories of `user_id`, searched on keywords alone: what recall falls
        back on when the query cannot be embedded (a local model not installed)."""
        return replace(self.searchers, embedder=None).memories(user_id=user_id)

    def memory_writer(
        self, user_id: str, *, contact_id: str | None = None, inbox_id: str | None = None
    ) -> MemoryWriter:
        """save_memory and retire_memory as `user_id` (each memory saved in the contact
        and inbox given), the statements embedded with the store's embedder."""
        return MemoryWriter(
            self.client,
            self.alias,
            user_id=user_id,
            embedder=self.embedder,
            contact_id=contact_id,
            inbox_id=inbox_id,
        )

    @contextlib.asynccontextmanager
    async def async_memory(self, user_id: str) -> AsyncIterator[AsyncMemorySearcher]:
        """memory_search bound to `user_id` on an async client of its own, closed on
        leaving: made within the caller's event loop, it never outlives it."""
        client = make_async_client(
            self.settings, **failover_only(self.settings), request_timeout=self.timeout
        )
        try:
            yield AsyncMemorySearcher(client, **self._memory_options(user_id))
        finally:
            await client.close()

    def _memory_options(self, user_id: str) -> dict[str, Any]:
        return {
            "user_id": user_id,
            "alias": self.alias,
            "embedder": self.embedder,
            "search_timeout": self.timeout,
            "reranker": self.reranker,
            "rerank_candidates": self.settings.reranker_candidates,
        }


_Key = tuple[tuple[str, ...], str]  # (the cluster's URLs, the alias)


class _Enrichers:
    """One background enricher per cluster and alias in a process, however many stores
    write to it (an OpenAI Agents session makes a store of its own): with a client and
    an embedder of its own, started by the first store that writes, stopped when the
    last one that wrote closes (or at exit: its thread is a daemon, its leases lapse)."""

    def __init__(self) -> None:
        # Per cluster and alias: the enricher, its client and embedder, and the stores
        # that use it.
        self._running: dict[_Key, tuple[Enricher, Elasticsearch, Any, set[int]]] = {}
        self._lock = threading.Lock()

    def join(self, store: "EventStore") -> None:
        """Make sure `store`'s alias is enriched in the background, and count it in."""
        settings = store.settings
        key = (tuple(settings.elasticsearch_urls()), settings.index)
        with self._lock:
            found = self._running.get(key)
            if found is None:
                client = make_client(settings, **failover_only(settings))
                embedder = embedder_for(settings)
                enricher = enricher_for(settings, client, embedder=embedder)
                found = self._running[key] = (enricher.__enter__(), client, embedder, set())
            found[3].add(id(store))

    def leave(self, store: "EventStore") -> None:
        key = (tuple(store.settings.elasticsearch_urls()), store.settings.index)
        with self._lock:
            found = self._running.get(key)
            if found is None or id(store) not in found[3]:
                return
            found[3].discard(id(store))
            if found[3]:
                return
            del self._running[key]
        _stop(*found[:3])

    def stop_all(self) -> None:
        """Stop every background enricher of this process, whoever still holds it."""
        with self._lock:
            running, self._running = self._running, {}
        for enricher, client, embedder, _ in running.values():
            _stop(enricher, client, embedder)


def _stop(enricher: Enricher, client: Elasticsearch, embedder: Any) -> None:
    """Stop `enricher`, then close what it used: its client and its embedder."""
    enricher.__exit__(None, None, None)
    client.close()
    _close(embedder)


def _close(embedder: Any) -> None:
    """Close an embedder's connections (an endpoint's pool), which would otherwise wait
    for the garbage collector; a local model has none."""
    close = getattr(embedder, "close", None)
    if close is not None:
        close()


_ENRICHERS = _Enrichers()
# At exit, before the interpreter ends the daemon threads: an enricher stopped inside a
# local model's native code would take the process down as it ends.
atexit.register(_ENRICHERS.stop_all)


def stop_background_enrichment() -> None:
    """Stop the background enrichment of every store of this process (an application's
    shutdown, or a test's end): its leases go to the alias's other enrichers at once,
    rather than when they lapse. A store that writes again starts it again."""
    _ENRICHERS.stop_all()
