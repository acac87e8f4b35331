"""What every framework adapter does with the library: store events so that they are
searchable when the call returns, erase a scope, and search one user's memory, each
within a deadline, from worker threads (the frameworks call from an event loop and
hand the work to `asyncio.to_thread`).

An adapter-only deployment runs no `serve`: its store runs the enrichment pass in a
thread of its own from its first write (stems, context, and the vectors a model
change leaves missing), sharing the work with any other enricher of the alias by
leases, and stops it on `close()` (or at exit). `SESSION_RECALL_ENRICH=false` turns it
off, for a deployment that runs `session-recall embed --follow` or serve beside."""

import contextlib
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

from session_recall.client import failover_only, make_async_client, make_client
from session_recall.config import Settings
from session_recall.embedders import embedder_for
from session_recall.indexer import Event, IndexerError, Scope, Submission, Writer, erase
from session_recall.indexer.deadline import Deadline
from session_recall.indexer.enricher import Enricher
from session_recall.indexer.leases import Leased
from session_recall.recall import AsyncMemorySearcher, MemorySearcher

DEFAULT_TIMEOUT_S = 10.0


class EventStore:
    """One alias of one cluster, for an adapter. `settings` default to the
    environment's (`ELASTICSEARCH_URL`, credentials, `SESSION_RECALL_INDEX`...); `index`
    overrides the alias. Thread-safe."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        index: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        settings = settings or Settings()
        if index is not None:  # checked as SESSION_RECALL_INDEX is: one concrete alias
            settings = settings.with_overrides(index=index)
        self.settings = settings
        self.alias = settings.index
        self.timeout = timeout
        self.client = make_client(settings, **failover_only(settings), request_timeout=timeout)
        # An endpoint's tries end within half the store's deadline: the write, and its
        # refresh, have the other half (an outage of the embedder stores without vectors).
        self.embedder = embedder_for(settings, within_s=timeout / 2)
        self._writers = threading.local()
        self._enricher: Enricher | None = None
        self._enricher_lock = threading.Lock()

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
        if not self.settings.enrich or self._enricher is not None:
            return
        with self._enricher_lock:
            if self._enricher is None:
                share = Leased(self.client, self.alias)
                enricher = Enricher(self.client, self.alias, self.embedder, share=share)
                self._enricher = enricher.__enter__()

    def close(self) -> None:
        """Stop the background enrichment (its leases go to the alias's other
        enrichers) and close the client. The store is not used afterwards."""
        with self._enricher_lock:
            if self._enricher is not None:
                self._enricher.__exit__(None, None, None)
                self._enricher = None
        self.client.close()

    def erase(self, scope: Scope) -> None:
        """Erase `scope` through the erasure path (its tombstone keeps replays out)."""
        erase(self.client, self.alias, scope, deadline=Deadline.after(self.timeout))

    def memory(self, user_id: str) -> MemorySearcher:
        """memory_search bound to `user_id`."""
        return MemorySearcher(self.client, **self._memory_options(user_id))

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
        }
