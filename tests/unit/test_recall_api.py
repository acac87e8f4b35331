"""The public surface of `recall`, and checks that run when a searcher is built."""

import re
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch
from pydantic import ValidationError

import session_recall.recall as recall
from session_recall.core.instant import Instant
from session_recall.recall import (
    ConversationSearcher,
    CrossConversationSearcher,
    CrossConversationSettings,
    CrossSessionSearcher,
    InvalidScope,
    RecallItem,
)

KEY = b"k" * 32
# A client that is never asked anything: building a searcher makes no request.
CLIENT = Elasticsearch("http://127.0.0.1:9")


def test_all_lists_exactly_the_public_names():
    public = {
        name
        for name, value in vars(recall).items()
        if not name.startswith("_")
        and getattr(value, "__module__", "").startswith("session_recall.recall")
    }
    # Constants and type aliases carry no __module__: the public ones are the bounds
    # and defaults (upper case), MatchMode and SearchMode.
    public |= {name for name in vars(recall) if name.isupper() and not name.startswith("_")}
    public |= {"MatchMode", "SearchMode"}
    assert sorted(recall.__all__) == sorted(public)


@pytest.mark.parametrize("user_id", ["", "  ", None, 7])
def test_a_searcher_needs_a_real_user(user_id):
    with pytest.raises(InvalidScope, match="user_id"):
        CrossSessionSearcher(CLIENT, alias="a", user_id=user_id, cursor_key=KEY)


def test_a_conversation_searcher_needs_a_session():
    with pytest.raises(InvalidScope, match="session_id"):
        ConversationSearcher(CLIENT, alias="a", user_id="u", session_id="", cursor_key=KEY)


@pytest.mark.parametrize("page_size", [0, -1, 1001])
def test_page_size_is_bounded(page_size):
    with pytest.raises(InvalidScope, match="page size"):
        CrossSessionSearcher(CLIENT, alias="a", user_id="u", cursor_key=KEY, page_size=page_size)


def test_scope_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        CrossSessionSearcher(CLIENT, "a", "u", KEY)  # type: ignore[misc]


def test_cross_conversation_is_off_by_default_with_90_days_and_200_conversations():
    settings = CrossConversationSettings()
    assert (settings.enabled, settings.lookback_days, settings.max_conversations) == (
        False,
        90,
        200,
    )


@pytest.mark.parametrize("days", [0, 366])
def test_lookback_days_run_from_1_to_365(days):
    with pytest.raises(ValidationError):
        CrossConversationSettings(lookback_days=days)


@pytest.mark.parametrize(
    ("scope", "missing"),
    [
        ({"user_id": "u", "contact_id": "c", "inbox_id": ""}, "inbox_id"),
        ({"user_id": " ", "contact_id": "c", "inbox_id": "i"}, "user_id"),
    ],
)
def test_a_cross_conversation_searcher_needs_user_contact_and_inbox(scope, missing):
    with pytest.raises(InvalidScope, match=missing):
        CrossConversationSearcher(CLIENT, alias="a", cursor_key=KEY, **scope)


def test_a_cross_conversation_searcher_cannot_be_built_without_a_user():
    with pytest.raises(TypeError, match="user_id"):
        CrossConversationSearcher(  # type: ignore[call-arg]
            CLIENT, alias="a", contact_id="c", inbox_id="i", cursor_key=KEY
        )


def test_items_render_timestamps_as_java_instants():
    item = RecallItem(
        session_id="s",
        timestamp=Instant.parse("2026-07-01T12:00:00.5Z"),
        type="user_message",
        text="t",
        event_id="e",
    )
    assert item.model_dump(mode="json")["timestamp"] == "2026-07-01T12:00:00.500Z"


WRITES = re.compile(
    r"\.\s*(index|bulk|create|delete\w*|update\w*|reindex|put_\w+|\w*script\w*|"
    r"open_point_in_time|scroll|msearch_template|search_template)\s*\("
)


def test_the_recall_source_makes_no_write_or_script_call():
    package = Path(recall.__file__).parent
    found = {
        f"{path.name}:{number}: {line.strip()}"
        for path in package.glob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if WRITES.search(line)
    }
    assert not found


def test_the_result_window_must_hold_more_than_a_page():
    with pytest.raises(InvalidScope, match="max_result_window"):
        CrossSessionSearcher(
            CLIENT, alias="a", user_id="u", cursor_key=KEY, page_size=50, max_result_window=50
        )
