"""Which statuses are retried, and how long the waits grow."""

import pytest
from elasticsearch import ConnectionError as ESConnectionError
from hypothesis import given
from hypothesis import strategies as st

from session_recall.indexer import RetryPolicy, WriteUnavailable
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
