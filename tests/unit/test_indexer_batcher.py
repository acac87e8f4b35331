"""The batcher's deadline: callers get `WriteUnavailable` in time, what they gave up on
is dropped rather than written for no one, and no answer is left unread. Whatever a
write raises, every request it holds is answered and the next write works."""

import asyncio
import gc
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from elastic_transport import ApiResponseMeta, HttpHeaders, NodeConfig
from elasticsearch import ApiError
from hypothesis import given, settings
from hypothesis import strategies as st

from session_recall.core.errors import SessionRecallError
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
from session_recall.indexer.errors import TooManyEvents, WriteFailed
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


class _Panic(BaseException):
    """Stands for what the native core raises on a Rust panic (PyO3's PanicException
    derives from BaseException, not Exception)."""


def _api_error(status: int, kind: str, reason: str) -> ApiError:
    meta = ApiResponseMeta(
        status=status,
        http_version="1.1",
        headers=HttpHeaders(),
        duration=0.0,
        node=NodeConfig("http", "localhost", 9200),
    )
    return ApiError(kind, meta, {"error": {"type": kind, "reason": reason}, "status": status})


FAULTS: list[BaseException] = [
    _api_error(400, "validation_exception", "this action would add [1] shards"),
    _api_error(403, "security_exception", "action [indices:admin/create] is unauthorized"),
    TypeError("Recursion limit reached"),
    RuntimeError("boom"),
    _Panic("called `Option::unwrap()` on a `None` value"),
    WriteUnavailable("Elasticsearch could not write.", hint="Retry."),
]


class _FaultyWriter:
    """Stands in for the `Writer`: each write raises the next planned fault, or
    succeeds when the plan says None."""

    def __init__(self, plan: list[BaseException | None]) -> None:
        self._plan = iter(plan)

    def write(
        self, submissions: Iterable[Submission], *, deadline: Deadline | None = None
    ) -> Iterator[Written]:
        batch = list(submissions)
        fault = next(self._plan, None)
        if fault is not None:
            raise fault
        for submission in batch:
            yield Written(submission, EventResult(status=Status.INDEXED))


@given(
    plan=st.lists(st.sampled_from([None, *FAULTS]), min_size=1, max_size=6),
    requests=st.integers(1, 4),
)
@settings(max_examples=60, deadline=None)
def test_whatever_a_write_raises_every_request_is_answered_and_the_next_write_works(
    plan: list[BaseException | None], requests: int
):
    async def scenario() -> None:
        async with Batcher(_FaultyWriter(plan), BatchingOptions(deadline=WAIT_S)) as batcher:
            for step, fault in enumerate(plan):
                calls = [batcher.submit(_events(10 * step + i, 2)) for i in range(requests)]
                outcomes = await asyncio.gather(*calls, return_exceptions=True)
                # A request may share the first write or wait for the next: each is
                # answered, with results or an error of ours, never left waiting.
                for outcome in outcomes:
                    assert isinstance(outcome, list | SessionRecallError), repr(outcome)
                if fault is not None:
                    assert any(isinstance(o, SessionRecallError) for o in outcomes)
                    assert batcher.failing() is not None
                    assert batcher.failing(hold_s=-1) is None  # held for a while only
                assert batcher.pending == 0
            # The plan is spent: the next write works, and the batcher says so.
            assert len(await batcher.submit(_events(999, 3))) == 3
            assert batcher.failing() is None

    asyncio.run(scenario())


def test_a_failed_write_answers_with_what_elasticsearch_said_and_logs_it_once(caplog):
    refused = _api_error(400, "validation_exception", "this action would add [1] shards")

    async def scenario() -> list[BaseException | list[EventResult]]:
        async with Batcher(_FaultyWriter([refused, refused, None])) as batcher:
            outcomes = [
                *await asyncio.gather(batcher.submit(_events(0, 1)), return_exceptions=True),
                *await asyncio.gather(batcher.submit(_events(1, 1)), return_exceptions=True),
                await batcher.submit(_events(2, 1)),
            ]
        return outcomes

    with caplog.at_level("INFO", logger="session_recall.indexer.batcher"):
        first, second, third = asyncio.run(scenario())

    assert isinstance(first, WriteFailed) and isinstance(second, WriteFailed)
    assert "400 validation_exception: this action would add [1] shards" in str(first)
    assert [r.status for r in third] == [Status.INDEXED]  # type: ignore[union-attr]
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1, "logged once per outage, not once per write"
    assert any("writes succeed again" in r.getMessage() for r in caplog.records)
