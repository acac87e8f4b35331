"""A search the searcher refuses sends no request: the client records every call."""

import pytest

from session_recall.core.errors import ElasticsearchUnavailable
from session_recall.recall import CrossSessionSearcher, EmptyQuery, InvalidSince, TooManyTerms
from tests.support.recording import RecordingClient

KEY = b"refusals-test-cursor-key-32bytes"


@pytest.fixture
def client() -> RecordingClient:
    return RecordingClient()


def alice(client: RecordingClient) -> CrossSessionSearcher:
    return CrossSessionSearcher(client, alias="a", user_id="alice", cursor_key=KEY)  # type: ignore[arg-type]


@pytest.mark.parametrize("query", [",", ", "])
def test_a_query_of_only_commas_is_rejected(client, query):
    with pytest.raises(EmptyQuery):
        alice(client).search(query)
    assert client.calls == []


def test_a_date_without_a_time_is_rejected_naming_the_format(client):
    with pytest.raises(InvalidSince, match="2026-07-01T00:00:00Z"):
        alice(client).search("we decided", since="2026-07-01")
    assert client.calls == []


def test_twenty_one_terms_are_rejected(client):
    with pytest.raises(TooManyTerms):
        alice(client).search(", ".join(f"word{i}" for i in range(21)))
    assert client.calls == []


def test_a_valid_search_does_reach_the_client(client):
    # The other tests' empty call lists mean something only if a search gets here.
    with pytest.raises(ElasticsearchUnavailable):
        alice(client).search("we decided", since="2026-07-01T00:00:00Z")
    assert client.calls
