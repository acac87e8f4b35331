"""A bounded client's timeout fits in the time left, and bounded clients are reused."""

from elasticsearch import Elasticsearch
from hypothesis import given
from hypothesis import strategies as st

from session_recall.indexer.deadline import (
    MIN_REQUEST_S,
    TIMEOUT_STEP,
    Deadline,
    bounded,
    request_timeout,
)


@given(st.floats(0, 3600))
def test_a_request_timeout_never_outlasts_the_time_left_and_is_at_most_2_percent_shorter(left):
    timeout = request_timeout(left)
    if left <= MIN_REQUEST_S:
        assert timeout == MIN_REQUEST_S
    else:
        assert max(left / TIMEOUT_STEP, MIN_REQUEST_S) <= timeout <= left


def test_requests_of_nearby_deadlines_share_one_bounded_client():
    client = Elasticsearch("http://127.0.0.1:9")
    first, second = Deadline.after(60), Deadline.after(60)
    copy = bounded(client, first)
    assert copy is not client
    assert bounded(client, second) is copy
    assert copy._request_timeout <= first.remaining()
    assert bounded(client, None) is client
