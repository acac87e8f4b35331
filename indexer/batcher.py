"""Merges concurrent requests into shared bulk writes, for an asyncio server.

Each request hands over its events (or the native batches made of them, see
`filling`) and awaits its own results. Batches of several requests are merged into
one bulk, up to the writer's chunk bounds. One worker takes
everything queued (up to a bound), writes it with the synchronous `Writer` in a thread
of its own (never the event loop's default pool, which slow reads could fill), and
answers every request. Group commit: when no write is in flight, a request goes out
at once (a lone agent gets a fast answer); while one is, new requests pile up and go
out together in the next, so batches grow with load on their own. A `linger` makes a
batch wait that long for company first.

A request may ask for its events to be searchable when answered (`refresh`): the
batch that holds them is followed by one refresh of the alias, shared by every such
request in it. The others are answered as before, their events searchable within the
index's refresh interval.

With a `deadline`, a request that is not answered in time gets `WriteUnavailable`, and
the batch writing it gives up at the earliest deadline among its requests: a hung
node costs a caller one deadline, never retries times request timeouts.

Whatever a write raises (a refusal by Elasticsearch, a fault of this process, even a
`BaseException` from the native core), every request of its batch is answered with
it, as a `SessionRecallError`, and the worker goes on with the next batch: no failure
leaves a caller waiting or ends the worker. The first failure after a success is
logged; `failing()` reports it until a write succeeds again, for `FAILING_HOLD_S` at
most: a sidecar taken out of rotation for it would otherwise get no write to recover
with (what `/readyz` reports).
"""

import asyncio
import contextlib
import copy
import logging
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar, get_args

from pydantic import BaseModel, Field

from session_recall.core.errors import SessionRecallError
from session_recall.indexer import native
from session_recall.indexer.deadline import Deadline
from session_recall.indexer.errors import (
    Overloaded,
    TooManyEvents,
    WriteFailed,
    WriteUnavailable,
    refusal_reason,
)
from session_recall.indexer.event import Event
from session_recall.indexer.results import EventResult
from session_recall.indexer.writer import Submission, Writer

if TYPE_CHECKING:
    from session_recall_native import Batch

log = logging.getLogger(__name__)

# How long a failed write keeps the sidecar reported as failing without a write since.
# Long enough for a load balancer to send traffic elsewhere; short, because only a
# write can show that the cause is gone, and none comes while it is out of rotation.
FAILING_HOLD_S = 30.0

T = TypeVar("T")
# When a caller is answered: once its events are stored ("false"), or once they are
# searchable too ("wait_for"), in the words of Elasticsearch's `refresh` parameter.
Refresh = Literal["false", "wait_for"]
REFRESH_POLICIES: tuple[Refresh, ...] = get_args(Refresh)


class BatchingOptions(BaseModel):
    # How long a batch waits for more requests once the writer is free. Zero by
    # default (group commit): an event goes out at once when no write is in flight,
    # and while one is, arrivals gather into the next, so batches grow with load.
    linger: float = Field(default=0, ge=0, le=1)
    max_batch_events: int = Field(default=5000, ge=1)
    # Beyond this many waiting events, new requests get a 503 rather than a queue
    # that grows until the process runs out of memory.
    max_pending_events: int = Field(default=100_000, ge=1)
    # Seconds a request waits for its results; None waits as long as the writer tries.
    deadline: float | None = Field(default=None, gt=0)


@dataclass
class _Ticket:
    """A request: its events (the Python path's) or its batches (the native core's)."""

    events: Sequence[Event]
    batches: Sequence["Batch"]
    future: asyncio.Future[None]
    deadline: Deadline | None
    refresh: bool = False
    count: int = 0  # its events, in either form
    results: list[EventResult] = field(default_factory=list)  # of `events`, in order
    answers: list[dict[int, EventResult]] = field(default_factory=list)  # of `batches`
    abandoned: bool = False  # its caller stopped waiting (deadline passed)

    @property
    def written(self) -> bool:
        return len(self.results) == len(self.events) and len(self.answers) == len(self.batches)


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
        self._thread: ThreadPoolExecutor | None = None
        self.batches = 0  # bulk batches written so far, for tests and metrics
        # Why the last write failed, and when, until one succeeds: None while they work.
        self._failure: tuple[str, float] | None = None

    @property
    def pending(self) -> int:
        """Events queued or being written."""
        return self._pending

    async def __aenter__(self) -> "Batcher":
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="batcher")
        self._worker = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Write what is queued, then stop."""
        self._closing = True
        self._arrived.set()
        if self._worker is not None:
            await self._worker
        if self._thread is not None:
            self._thread.shutdown(wait=False)

    async def submit(
        self, events: Sequence[Event], *, refresh: Refresh = "false"
    ) -> list[EventResult]:
        """Results in the order of `events`, once Elasticsearch has answered for all;
        with `refresh="wait_for"`, once they are searchable too.

        Raises `WriteUnavailable` (Elasticsearch down, or the deadline passed) or
        `Overloaded` (too much queued). A request of more than `max_pending_events`
        could never be taken: the caller must split it (`TooManyEvents`).
        """
        if not events:
            return []
        ticket = await self._written_ticket(events, (), len(events), refresh)
        return ticket.results

    async def submit_batches(
        self, batches: Sequence["Batch"], *, refresh: Refresh = "false"
    ) -> list[dict[int, EventResult]]:
        """`submit` for native batches: for each batch, the results of its events that
        were not indexed, by position (see `Writer.write_batches`)."""
        count = sum(len(batch) for batch in batches)
        if not count:
            return [{} for _ in batches]
        ticket = await self._written_ticket((), batches, count, refresh)
        return ticket.answers

    async def in_writer_thread(self, call: Callable[[], T]) -> T:
        """`call()` run in the thread that writes, between writes: for what the writer
        must do before a request is taken (`Writer.check_layout`)."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, call)

    async def _written_ticket(
        self, events: Sequence[Event], batches: Sequence["Batch"], count: int, refresh: Refresh
    ) -> _Ticket:
        limit = self.options.max_pending_events
        if count > limit:
            raise TooManyEvents(
                f"{count} events in one request is more than the {limit} this "
                "sidecar can hold at once.",
                hint=f"Send at most {limit} events per request.",
            )
        if self._closing:
            raise Overloaded("The sidecar is shutting down.", hint="Retry in a moment.")
        if self._pending + count > limit:
            raise Overloaded(
                f"Elasticsearch is writing more slowly than events arrive: {self._pending} "
                f"events are already waiting to be written, and {count} more would "
                f"pass the limit of {limit}.",
                hint="Send the same request again after Retry-After.",
            )
        seconds = self.options.deadline
        deadline = None if seconds is None else Deadline.after(seconds)
        future = asyncio.get_running_loop().create_future()
        ticket = _Ticket(
            events, batches, future, deadline, refresh=refresh == "wait_for", count=count
        )
        self._queue.append(ticket)
        self._queued_events += count
        self._pending += count
        self._arrived.set()
        if self._queued_events >= self.options.max_batch_events:
            self._full.set()
        # Shielded: a client that hangs up must not cancel the answer others share.
        if deadline is None:
            await asyncio.shield(ticket.future)
            return ticket
        try:
            await asyncio.wait_for(asyncio.shield(ticket.future), deadline.remaining())
        except TimeoutError:
            self._abandon(ticket)
            raise _past_deadline(deadline) from None
        return ticket

    def _abandon(self, ticket: _Ticket) -> None:
        """Its caller stopped waiting: nothing will read its answer (so none is set),
        and a ticket still queued is dropped at once, so that its events do not stay
        in memory, nor count as pending, for no one."""
        ticket.abandoned = True
        try:
            self._queue.remove(ticket)
        except ValueError:
            return  # being written by the worker, which settles it
        self._queued_events -= ticket.count
        self._pending -= ticket.count
        if self._queued_events < self.options.max_batch_events:
            self._full.clear()
        ticket.future.cancel()

    async def _run(self) -> None:
        while self._queue or not self._closing:
            if not self._queue:
                self._arrived.clear()
                await self._arrived.wait()
                if not self._closing and self.options.linger > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._full.wait(), self.options.linger)
            if not self._queue:
                continue
            batch = self._take()
            try:
                written = await self._written(batch)
            except asyncio.CancelledError:
                self._settle((batch, WriteUnavailable("The sidecar is shutting down."), None))
                raise
            self._settle(written)

    async def _written(
        self, batch: list[_Ticket]
    ) -> tuple[list[_Ticket], SessionRecallError | None, SessionRecallError | None]:
        """Writes the batch, then refreshes when a request of it asked to; returns
        the batch, the write's error and the refresh's, each as a `SessionRecallError`."""
        loop = asyncio.get_running_loop()
        error = refresh_error = None
        try:
            await loop.run_in_executor(self._thread, self._write, batch)
        except asyncio.CancelledError:
            raise
        except BaseException as err:  # a PyO3 panic is a BaseException: answer it too
            error = self._failed(err)
        else:
            if self._failure is not None:
                log.info("writes succeed again")
            self._failure = None
        if any(ticket.refresh and ticket.written for ticket in batch):
            try:
                await loop.run_in_executor(self._thread, self._refresh, batch)
            except asyncio.CancelledError:
                raise
            except BaseException as err:
                refresh_error = _as_domain_error(err)
        self.batches += 1
        return batch, error, refresh_error

    def _failed(self, err: BaseException) -> SessionRecallError:
        """`err` as its requests are answered with it; logged when writes worked until
        now (once per outage, not once per batch)."""
        error = _as_domain_error(err)
        if self._failure is None:
            if isinstance(err, SessionRecallError):
                log.error("a write failed: %s", error)
            else:  # a fault of this process: its traceback is what a fix needs
                log.error("a write failed: %s", error, exc_info=err)
        self._failure = (str(error), time.monotonic())
        return error

    def failing(self, hold_s: float = FAILING_HOLD_S) -> str | None:
        """Why the last write failed, when no write succeeded since and it failed
        within `hold_s` seconds; else None."""
        failure = self._failure
        if failure is None or time.monotonic() - failure[1] > hold_s:
            return None
        return failure[0]

    def _settle(
        self,
        written: tuple[list[_Ticket], SessionRecallError | None, SessionRecallError | None],
    ) -> None:
        """Answer every ticket of a batch. Each failed one gets an error of its own, with
        no traceback: a shared one would keep the frames of the writer, and of every
        caller it is raised in, with their events, alive as long as any holds it."""
        batch, error, refresh_error = written
        for ticket in batch:
            self._pending -= ticket.count
            if ticket.abandoned:
                ticket.future.cancel()  # an answer set now would never be read
                continue
            if ticket.future.done():
                continue
            if not ticket.written:
                failure = error or _past_deadline(ticket.deadline)  # or it was skipped
                ticket.future.set_exception(_fresh(failure))
            elif ticket.refresh and refresh_error is not None:
                # Stored, but maybe not searchable yet: sending them again is harmless.
                ticket.future.set_exception(_fresh(refresh_error))
            else:
                ticket.future.set_result(None)

    def _take(self) -> list[_Ticket]:
        batch = [self._queue.popleft()]
        size = batch[0].count
        while self._queue and size + self._queue[0].count <= self.options.max_batch_events:
            ticket = self._queue.popleft()
            batch.append(ticket)
            size += ticket.count
        self._queued_events -= size
        if self._queued_events < self.options.max_batch_events:
            self._full.clear()
        return batch

    def _write(self, batch: list[_Ticket]) -> None:
        """Runs in the batcher's thread; fills each ticket's results as chunks come back.
        Requests whose caller stopped waiting, or soon will (deadline passed), are not
        written."""
        live = [t for t in batch if not t.abandoned and (t.deadline is None or t.deadline.allows())]
        deadline = _earliest(live)
        if any(ticket.events for ticket in live):
            submissions = (
                Submission(event, token=ticket) for ticket in live for event in ticket.events
            )
            for written in self._writer.write(submissions, deadline=deadline):
                written.submission.token.results.append(written.result)
        parts = [(ticket, part) for ticket in live for part in ticket.batches]
        if not parts:
            return
        options = self._writer.options
        groups = list(_grouped(parts, options.chunk_events, options.chunk_bytes))
        merged = (native.merged([part for _, part in group]) for group in groups)
        for group, (_, results) in zip(
            groups, self._writer.write_batches(merged, deadline=deadline), strict=True
        ):
            start = 0
            for ticket, part in group:
                end = start + len(part)
                ticket.answers.append(
                    {p - start: r for p, r in results.items() if start <= p < end}
                    if results
                    else {}
                )
                start = end

    def _refresh(self, batch: list[_Ticket]) -> None:
        self._writer.refresh(deadline=_earliest([t for t in batch if t.refresh]))


def _grouped(
    parts: list[tuple[_Ticket, "Batch"]], max_count: int, max_bytes: int
) -> Iterator[list[tuple[_Ticket, "Batch"]]]:
    """`parts` in order, in groups of at most `max_count` events and `max_bytes`
    bytes (a part over them alone makes a group of its own): one bulk each."""
    group: list[tuple[_Ticket, Batch]] = []
    count = size = 0
    for part in parts:
        batch = part[1]
        if group and (count + len(batch) > max_count or size + batch.size > max_bytes):
            yield group
            group, count, size = [], 0, 0
        group.append(part)
        count, size = count + len(batch), size + batch.size
    if group:
        yield group


def _earliest(tickets: list[_Ticket]) -> Deadline | None:
    deadlines = [t.deadline for t in tickets if t.deadline is not None]
    return min(deadlines, key=lambda d: d.at) if deadlines else None


def _as_domain_error(err: BaseException) -> SessionRecallError:
    """`err` as a caller is answered with it: itself when it is one of ours, else a
    `WriteFailed` that says what Elasticsearch (or this process) answered."""
    if isinstance(err, SessionRecallError):
        return err
    return WriteFailed(
        f"The events could not be written: {refusal_reason(err)}.",
        hint="The sidecar's log has the details; send the same request again once the "
        "cause is fixed (it is idempotent).",
    )


def _fresh(error: SessionRecallError) -> SessionRecallError:
    """A copy of `error` without its traceback, cause or context: each caller gets its
    own (see `_settle`). An error that cannot be copied is told again in a new one."""
    try:
        copied = copy.copy(error)
    except Exception:
        copied = type(error).__new__(type(error))
        SessionRecallError.__init__(copied, error.message, hint=error.hint)
    copied.__traceback__ = copied.__cause__ = copied.__context__ = None
    return copied


def _past_deadline(deadline: Deadline | None) -> WriteUnavailable:
    seconds = f"{deadline.seconds:g} s " if deadline is not None else ""
    return WriteUnavailable(
        f"Elasticsearch did not store the events within the {seconds}deadline; some of "
        "them may be stored.",
        hint="Send the same request again after Retry-After (it is idempotent).",
    )
