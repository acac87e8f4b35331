"""The ADK scope mapping and URI: no two `(app_name, user_id)` pairs share a user of
ours, and a URI never carries credentials (nor shows them in its error)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.errors import ConfigurationError
from session_recall.integrations.adk.scope import memory_user
from session_recall.integrations.adk.uri import parse_uri
from session_recall.recall.errors import InvalidScope

parts = st.text(alphabet=st.sampled_from("ab/%2F5"), min_size=1, max_size=6)


@given(parts, parts, parts, parts)
def test_two_pairs_share_a_user_only_when_they_are_the_same_pair(a, b, c, d):
    assert (memory_user(a, b) == memory_user(c, d)) == ((a, b) == (c, d))


def test_the_mapping_is_readable_and_refuses_what_it_cannot_map():
    assert memory_user("a/b", "c") == "adk:a%2Fb/c"
    assert memory_user("a", "b/c") == "adk:a/b%2Fc"
    assert memory_user("shop", "ana") == "adk:shop/ana"
    with pytest.raises(InvalidScope, match="app_name"):
        memory_user(" ", "ana")
    with pytest.raises(InvalidScope, match="limit"):
        memory_user("a" * 400, "b" * 400)


def test_a_uri_names_the_index_and_mode_and_never_credentials():
    assert parse_uri("session-recall://") == (None, None)
    assert parse_uri("session-recall://my-events?mode=keyword") == ("my-events", "keyword")
    for bad in (
        "session-recall://elastic:s3cret@my-events",
        "session-recall://my-events?mode=fuzzy",
        "session-recall://my-events?password=s3cret",
        "session-recall://my-events/s3cret",
        "elastic:s3cret@my-events",
    ):
        with pytest.raises(ConfigurationError) as refused:
            parse_uri(bad)
        assert "s3cret" not in str(refused.value), bad


@pytest.mark.parametrize("memory_id", ["", "   ", "m" * 513])
async def test_a_bad_memory_id_is_refused_as_every_other_bad_argument_is(memory_id):
    from session_recall.config import Settings
    from session_recall.integrations.adk import SessionRecallMemoryService

    # No request is made: the argument is refused first (the URL answers nothing).
    settings = Settings(ELASTICSEARCH_URL="http://127.0.0.1:9", SESSION_RECALL_EMBEDDER="none")
    service = SessionRecallMemoryService(settings=settings, timeout=1)
    with pytest.raises(InvalidScope, match="memory_id"):
        await service.delete_memory(app_name="shop", user_id="ana", memory_id=memory_id)
