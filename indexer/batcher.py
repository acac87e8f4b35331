"""Merges concurrent requests into shared bulk writes, for an asyncio server.

Each request hands over its events and awaits its own results. One worker takes
everything queued (up to a bound), writes it in a thread with the synchronous
`Writer`, and answers every request. While a write is in flight new requests pile
up, so batches grow with load on their own; a lone event waits at most `linger`.

A request may ask for its events to be searchable when answered (`refresh`): the
batch that holds them is followed by one refresh of the alias, shared by every such
request in it. The others are answered as before, their events searchable within the
index's refresh interval.
"""

import asyncio
import contextlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from pydantic import BaseModel, Field

from session_recall.indexer.errors import Overloaded
from session_recall.indexer.event import Event
from session_recall.indexer.results import EventResult
from session_recall.indexer.writer import Submission, Writer

# When a caller is answered: once its events are stored ("false"), or once they are
# searchable too ("wait_for"), in the words of Elasticsearch's `refresh` parameter.
Refresh = Literal["false", "wait_for"]
REFRESH_POLICIES: tuple[Refresh, ...] = get_args(Refresh)


class BatchingOptions(BaseModel):
    # Well under a second: "a quiet sidecar still flushes within a second".
    linger: float = Field(default=0.05, ge=0, le=1)
    max_batch_events: int = Field(default=5000, ge=1)
    # Beyond this many waiting events, new requests get a 503 rather than a queue
    # that grows until the process runs out of memory.
    max_pending_events: int = Field(default=100_000, ge=1)


@dataclass
class _Ticket:
    events: Sequence[Event]
    future: asyncio.Future[list[EventResult]]
    refresh: bool = False
    results: list[EventResult] = field(default_factory=list)

    @property
    def written(self) -> bool:
        return len(self.results) == len(self.events)


class Batcher:
    def __init__(self, writer: Writer, options: BatchingOptions | None = None) -> None:
        self._writer = writer
        self.options = options or BatchingOptions()
        self._queue: deque[_Ticket] = deque()
        self._queued_events = 0
        self._pending = 0  # queued or being written
        self._arrived = asyncio.Event()
        self._full = asyncio.Event()
        self._closing = False
        self._worker: asyncio.Task[None] | None = None
        self.batches = 0  # bulk batches written so far, for tests and metrics

    async def __aenter__(self) -> "Batcher":
        self._worker = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Write what is queued, then stop."""
        self._closing = True
        self._arrived.set()
        if self._worker is not None:
            await self._worker

    async def submit(
        self, events: Sequence[Event], *, refresh: Refresh = "false"
    ) -> list[EventResult]:
        """Results in the order of `events`, once Elasticsearch has answered for all;
        with `refresh="wait_for"`, once they are searchable too.

        Raises `WriteUnavailable` (Elasticsearch down) or `Overloaded` (too much queued).
        """
        if not events:
            return []
        if self._closing:
            raise Overloaded("The sidecar is shutting down.", hint="Retry in a moment.")
        if self._pending + len(events) > self.options.max_pending_events:
            raise Overloaded(
                f"{self._pending} events are waiting to be written.",
                hint="Retry after a moment; Elasticsearch is slower than the producers.",
            )
        future = asyncio.get_running_loop().create_future()
        ticket = _Ticket(events, future, refresh=refresh == "wait_for")
        self._queue.append(ticket)
        self._queued_events += len(events)
        self._pending += len(events)
        self._arrived.set()
        if self._queued_events >= self.options.max_batch_events:
            self._full.set()
        # Shielded: a client that hangs up must not cancel the answer others share.
        return await asyncio.shield(ticket.future)

    async def _run(self) -> None:
        while self._queue or not self._closing:
            if not self._queue:
                self._arrived.clear()
                await self._arrived.wait()
                if not self._closing:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._full.wait(), self.options.linger)
            if not self._queue:
                continue
            batch = self._take()
            error: Exception | None = None
            try:
                await asyncio.to_thread(self._write, batch)
            except Exception as err:
                error = err
            refresh_error: Exception | None = None
            if any(ticket.refresh and ticket.written for ticket in batch):
                try:
                    await asyncio.to_thread(self._writer.refresh)
                except Exception as err:
                    refresh_error = err
            self.batches += 1
            for ticket in batch:
                self._pending -= len(ticket.events)
                if ticket.future.done():
                    continue
                if not ticket.written:
                    ticket.future.set_exception(error or RuntimeError("no result"))
                elif ticket.refresh and refresh_error is not None:
                    # Stored, but maybe not searchable yet: sending them again is harmless.
                    ticket.future.set_exception(refresh_error)
                else:
                    ticket.future.set_result(ticket.results)

    def _take(self) -> list[_Ticket]:
        batch = [self._queue.popleft()]
        size = len(batch[0].events)
        while self._queue and size + len(self._queue[0].events) <= self.options.max_batch_events:
            ticket = self._queue.popleft()
            batch.append(ticket)
            size += len(ticket.events)
        self._queued_events -= size
        if self._queued_events < self.options.max_batch_events:
            self._full.clear()
        return batch

    def _write(self, batch: list[_Ticket]) -> None:
        """Runs in a worker thread; fills each ticket's results as chunks come back."""
        submissions = (
            Submission(event, token=ticket) for ticket in batch for event in ticket.events
        )
        for written in self._writer.write(submissions):
            written.submission.token.results.append(written.result)
