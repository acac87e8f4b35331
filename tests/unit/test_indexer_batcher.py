"""The batcher's deadline: callers get `WriteUnavailable` in time, what they gave up on
is dropped rather than written for no one, and no answer is left unread."""

import asyncio
import gc
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from session_recall.indexer import (
    Batcher,
    BatchingOptions,
    EventResult,
    Status,
    Submission,
    WriteUnavailable,
    Written,
    parse_object,
)
from session_recall.indexer.deadline import Deadline
from session_recall.indexer.errors import TooManyEvents
from tests.support.ndjson import event

WAIT_S = 30


class _HeldWriter:
    """Stands in for the `Writer`: each write waits until `release` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.written: list[int] = []

    def write(
        self, submissions: Iterable[Submission], *, deadline: Deadline | None = None
    ) -> Iterator[Written]:
        batch = list(submissions)
        self.written.append(len(batch))
        self.started.set()
        self.release.wait(WAIT_S)
        for submission in batch:
            yield Written(submission, EventResult(status=Status.INDEXED))


def _events(first: int, count: int) -> list[Any]:
    return [parse_object(event(i)).event for i in range(first, first + count)]


def test_callers_past_the_deadline_are_answered_and_what_was_queued_is_dropped():
    writer = _HeldWriter()
    unhandled: list[dict[str, Any]] = []

    async def scenario() -> tuple[list[BaseException], int, int]:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: unhandled.append(ctx))
        options = BatchingOptions(linger=0, deadline=0.5)
        async with Batcher(writer, options) as batcher:
            first = asyncio.create_task(batcher.submit(_events(0, 3)))
            await asyncio.to_thread(writer.started.wait, WAIT_S)
            second = asyncio.create_task(batcher.submit(_events(3, 2)))  # queued behind
            outcomes = await asyncio.gather(first, second, return_exceptions=True)
            pending_while_held = batcher.pending
            writer.release.set()
        gc.collect()
        await asyncio.sleep(0)
        return outcomes, pending_while_held, batcher.pending

    outcomes, pending_while_held, pending_after = asyncio.run(scenario())

    assert all(isinstance(o, WriteUnavailable) for o in outcomes), outcomes
    assert "within the 0.5 s deadline" in str(outcomes[0])
    assert pending_while_held == 3, "the queued request's events were kept for no one"
    assert (writer.written, pending_after) == ([3], 0)
    assert unhandled == [], "an answer was set that nobody read"


def test_a_request_larger_than_the_queue_is_refused_as_such():
    async def scenario() -> None:
        async with Batcher(_HeldWriter(), BatchingOptions(max_pending_events=100)) as batcher:
            await batcher.submit(_events(0, 101))

    with pytest.raises(TooManyEvents, match="Send at most 100 events per request"):
        asyncio.run(scenario())


def test_a_lone_request_goes_out_at_once_and_arrivals_during_a_write_share_the_next():
    """Group commit: the first request is written alone, without waiting for company;
    the requests that arrive while it is in flight go out together in the next write."""
    writer = _HeldWriter()

    async def scenario() -> list[list[EventResult]]:
        async with Batcher(writer) as batcher:  # default options
            first = asyncio.create_task(batcher.submit(_events(0, 1)))
            await asyncio.to_thread(writer.started.wait, WAIT_S)
            later = [asyncio.create_task(batcher.submit(_events(1 + i, 2))) for i in range(5)]
            for _ in range(10_000):  # until every request is queued behind the first
                if batcher.pending == 11:
                    break
                await asyncio.sleep(0)
            writer.release.set()
            return await asyncio.gather(first, *later)

    answers = asyncio.run(scenario())

    assert writer.written == [1, 10]
    assert [len(a) for a in answers] == [1, 2, 2, 2, 2, 2]
