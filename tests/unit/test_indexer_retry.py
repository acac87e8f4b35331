"""Which statuses are retried, and how long the waits grow."""

import pytest
from elasticsearch import ConnectionError as ESConnectionError
from hypothesis import given
from hypothesis import strategies as st

from session_recall.indexer import RetryPolicy, WriteUnavailable
from session_recall.indexer.deadline import Deadline
from session_recall.indexer.retry import call_with_retries, is_retryable


@pytest.mark.parametrize(
    ("status", "retryable"),
    [(200, False), (400, False), (404, False), (409, False), (429, True), (500, True), (503, True)],
)
def test_only_429_and_5xx_are_retried(status, retryable):
    assert is_retryable(status) is retryable


@given(st.integers(1, 30), st.floats(0, 2), st.floats(0, 5))
def test_delays_are_bounded_and_one_fewer_than_attempts(attempts, initial, cap):
    delays = list(
        RetryPolicy(max_attempts=attempts, initial_backoff=initial, max_backoff=cap).delays()
    )
    assert len(delays) == attempts - 1
    assert all(0 <= d <= cap for d in delays)


def test_calls_are_retried_until_they_succeed():
    failures = iter([ESConnectionError("down"), ESConnectionError("down")])
    waits = []

    def flaky() -> str:
        error = next(failures, None)
        if error:
            raise error
        return "ok"

    result = call_with_retries(
        flaky, policy=RetryPolicy(max_attempts=3), what="x", sleep=waits.append
    )
    assert result == "ok"
    assert len(waits) == 2


def test_retries_stop_at_the_bound_with_an_actionable_error():
    def down() -> None:
        raise ESConnectionError("down")

    with pytest.raises(WriteUnavailable, match="after 2 attempts") as raised:
        call_with_retries(
            down, policy=RetryPolicy(max_attempts=2), what="read", sleep=lambda _: None
        )
    assert raised.value.hint


def test_retries_stop_when_the_deadline_leaves_no_time_for_another_attempt():
    calls, waits = [], []

    def down() -> None:
        calls.append(1)
        raise ESConnectionError("down")

    # Backoffs of 30 s or more; 10 s left: one attempt, then no waiting past the deadline.
    policy = RetryPolicy(max_attempts=10, initial_backoff=60, max_backoff=60)
    with pytest.raises(WriteUnavailable, match="within the 10 s deadline") as raised:
        call_with_retries(
            down, policy=policy, what="read", sleep=waits.append, deadline=Deadline.after(10)
        )
    assert (len(calls), waits) == (1, [])
    assert "ConnectionError" in raised.value.message
    assert "try again in a few seconds" in (raised.value.hint or "")


def test_nothing_is_sent_once_the_deadline_has_passed():
    def never() -> None:
        raise AssertionError("called after the deadline")

    with pytest.raises(WriteUnavailable, match=r"within the 0\.01 s deadline"):
        call_with_retries(never, policy=RetryPolicy(), what="read", deadline=Deadline(0.01, at=0.0))
