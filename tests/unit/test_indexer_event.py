"""The event model: aliases, limits, derived ids, and the document it becomes."""

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.instant import Instant
from session_recall.indexer import (
    Event,
    EventLimits,
    Parsed,
    Rejected,
    parse_line,
    parse_object,
    to_document,
)
from session_recall.indexer.document import (
    DEFAULT_IDENTITY,
    IDENTITIES,
    LEGACY_IDENTITY,
    document_id,
)
from tests.support.ndjson import event

SNAKE = {
    "event_id": "e1",
    "user_id": "alice",
    "session_id": "s1",
    "contact_id": "c1",
    "inbox_id": "i1",
    "conversation_type": "playground",
    "timestamp": "2026-07-01T12:00:00.5Z",
    "type": "user_message",
    "text": "hello",
    "metadata": {"model": "m", "tokens": [1, 2]},
}
CAMEL = {
    "eventId": "e1",
    "userId": "alice",
    "sessionId": "s1",
    "contactId": "c1",
    "inboxId": "i1",
    "conversationType": "playground",
    "timestamp": "2026-07-01T12:00:00.5Z",
    "type": "user_message",
    "text": "hello",
    "metadata": {"model": "m", "tokens": [1, 2]},
}


def _event(value: dict) -> Event:
    parsed = parse_object(value)
    assert isinstance(parsed, Parsed), parsed
    return parsed.event


def test_camel_and_snake_case_give_identical_documents():
    snake, camel = to_document(_event(SNAKE), index="a"), to_document(_event(CAMEL), index="a")
    assert camel == snake
    assert b'"timestamp":"2026-07-01T12:00:00.500000000Z"' in snake.body


def test_without_event_id_camel_and_snake_derive_the_same_id():
    snake = {k: v for k, v in SNAKE.items() if k != "event_id"}
    camel = {k: v for k, v in CAMEL.items() if k != "eventId"}
    assert _event(snake).event_id == _event(camel).event_id


def test_parsing_never_modifies_the_callers_value():
    value = {k: v for k, v in SNAKE.items() if k != "event_id"}
    before = repr(value)
    _event(value)
    assert repr(value) == before


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"user_id": ""}, "user_id: must not be empty"),
        ({"session_id": "   "}, "session_id: must not be empty"),
        ({"event_id": "x" * 513}, "event_id: is 513 characters long; the limit is 512"),
        ({"text": "é" * 600_000}, "text: is over the 1000000-byte limit"),
        ({"colour": "red"}, "unknown field 'colour'"),
        ({"userId": "bob"}, "user_id is given twice (as user_id and userId)"),
        ({"timestamp": "2026-07-01T12:00:00"}, "is not an ISO-8601 instant with a time"),
        ({"timestamp": 1782907200}, "timestamp: expected an ISO-8601 instant"),
        ({"user_id": 42}, "user_id: Input should be a valid string"),
        ({"metadata": [1]}, "metadata: Input should be a valid dictionary"),
    ],
)
def test_invalid_events_are_refused_with_a_reason_naming_the_field(change: dict, reason: str):
    parsed = parse_object({**SNAKE, **change})
    assert isinstance(parsed, Rejected)
    assert reason in parsed.reason


def test_a_missing_field_is_named_in_snake_case():
    parsed = parse_object({k: v for k, v in CAMEL.items() if k != "sessionId"})
    assert isinstance(parsed, Rejected)
    assert parsed.reason == "session_id is required"


def test_the_text_limit_is_configurable():
    assert isinstance(parse_object(SNAKE, EventLimits(max_text_bytes=4)), Rejected)
    assert isinstance(parse_object(SNAKE, EventLimits(max_text_bytes=5)), Parsed)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"{nope", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object, not an array"),
        (b'"text"', "must be a JSON object, not a string"),
    ],
)
def test_lines_that_are_not_objects_are_refused(line: bytes, reason: str):
    parsed = parse_line(line)
    assert isinstance(parsed, Rejected)
    assert reason in parsed.reason


def test_blank_lines_are_not_events():
    assert parse_line(b"  \r") is None


def test_two_users_may_reuse_an_event_id_without_colliding():
    alice, bob = _event(SNAKE), _event({**SNAKE, "user_id": "bob"})
    assert to_document(alice, index="a").id != to_document(bob, index="a").id


AT = Instant.parse("2026-07-01T12:00:00.5Z")


@pytest.mark.parametrize("identity", IDENTITIES)
def test_ids_never_collide_by_joining(identity):
    assert document_id(user_id="a:b", event_id="c", timestamp=AT, identity=identity) != (
        document_id(user_id="a", event_id="b:c", timestamp=AT, identity=identity)
    )


def test_document_ids_fit_elasticsearch_whatever_the_ids():
    long = _event({**SNAKE, "user_id": "ü" * 512, "event_id": "ß" * 512})
    assert len(to_document(long, index="a").id.encode()) <= 512


_ids = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20).filter(
    lambda s: s.strip()
)


@given(_ids, _ids, st.sampled_from(IDENTITIES))
def test_a_documents_id_is_the_digest_of_what_its_identity_names(user_id, event_id, identity):
    event = _event({**SNAKE, "user_id": user_id, "event_id": event_id})
    assert to_document(event, index="a", identity=identity).id == document_id(
        user_id=user_id, event_id=event_id, timestamp=event.timestamp, identity=identity
    )


def test_document_ids_are_the_ones_stored_before():
    """A replay must meet the copy an earlier release stored: an alias set up before the
    identity took the instant keeps its ids; one set up since has its own, fixed too."""
    assert document_id(user_id="alice", event_id="e-1", timestamp=AT, identity=LEGACY_IDENTITY) == (
        "c41226f33f255e25dd56bb8c748c8c6a95194f8cab4e9b43dffab454ae8cb976"
    )
    assert document_id(
        user_id="alice", event_id="e-1", timestamp=AT, identity=DEFAULT_IDENTITY
    ) == ("a59be8f8e5bc95e48a5d234fbed0c3ec2e9b11a051b8aedbc22e24c25abd4675")


def test_an_id_reused_at_another_instant_is_another_event_and_the_same_instant_the_same():
    one = to_document(_event({**SNAKE, "event_id": "msg-1"}), index="a")
    later = _event({**SNAKE, "event_id": "msg-1", "timestamp": "2026-07-01T12:00:01Z"})
    edited = _event({**SNAKE, "event_id": "msg-1", "text": "edited"})
    assert to_document(later, index="a").id != one.id
    assert to_document(edited, index="a").id == one.id  # a replay, whatever it says


_content = st.fixed_dictionaries(
    {
        "user_id": _ids,
        "session_id": _ids,
        "timestamp": st.integers(0, 2**40).map(lambda n: f"2026-07-01T00:00:00.{n % 10**9:09d}Z"),
        "type": _ids,
        "text": st.text(max_size=30),
        "contact_id": st.none() | _ids,
        "inbox_id": st.none() | _ids,
        "conversation_type": _ids,
    }
)


@given(_content)
def test_derived_ids_are_deterministic(content: dict):
    value = {k: v for k, v in content.items() if v is not None}
    assert _event(value).event_id == _event(dict(value)).event_id


@given(_content, _content)
def test_derived_ids_differ_for_different_content(first: dict, second: dict):
    a = _event({k: v for k, v in first.items() if v is not None})
    b = _event({k: v for k, v in second.items() if v is not None})
    same = a.model_dump(exclude={"event_id"}) == b.model_dump(exclude={"event_id"})
    assert (a.event_id == b.event_id) == same


def test_derived_ids_stay_what_earlier_releases_stored():
    """A replay must meet the copy an earlier release stored: the derivation is fixed."""
    value = {k: v for k, v in SNAKE.items() if k != "event_id"}
    assert _event(value).event_id == (
        "488426adf9f7183826670d1e124ac3411c60a778ca3bf6f050174c85be49c845"
    )


def test_the_whitespace_an_identifier_may_not_be_made_of_is_pythons():
    import sys

    from session_recall.indexer.event import WHITESPACE

    every = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
    assert every == WHITESPACE


@given(st.text(max_size=8) | st.text(alphabet=" \t\x1c\x85\u3000x", max_size=8), st.booleans())
def test_an_identifier_is_refused_exactly_when_blank_or_too_long(text: str, long: bool):
    """pydantic-core checks ids; the rule is Python's: blank as `strip` sees it."""
    user_id = text * 600 if long and text else text
    outcome = parse_object({**SNAKE, "user_id": user_id})
    if not user_id.strip():
        assert isinstance(outcome, Rejected) and outcome.reason == "user_id: must not be empty"
    elif len(user_id) > 512:
        assert isinstance(outcome, Rejected)
        assert outcome.reason == f"user_id: is {len(user_id)} characters long; the limit is 512"
    else:
        assert isinstance(outcome, Parsed) and outcome.event.user_id == user_id


def test_an_oversized_text_is_named_beside_the_other_problems():
    parsed = parse_object({**SNAKE, "user_id": "", "text": "é" * 600_000})
    assert isinstance(parsed, Rejected)
    assert "user_id: must not be empty" in parsed.reason
    assert "text: is over the 1000000-byte limit" in parsed.reason


def test_the_text_limit_binds_input_not_the_model():
    # A stored event read back (`migration`) is not held to today's limit.
    assert Event.model_validate({**SNAKE, "text": "x" * 5}).text == "x" * 5
    assert isinstance(
        parse_object({**SNAKE, "text": "x" * 5}, EventLimits(max_text_bytes=4)), Rejected
    )


def test_the_window_of_accepted_times_is_ten_years_back_and_a_day_ahead():
    now = time.time_ns()
    day = 86_400 * 10**9
    limits = EventLimits()
    assert limits.window_problem(now - 3649 * day, now) is None
    assert limits.window_problem(now + day - 10**9, now) is None
    assert "more than 3650 days before now" in str(limits.window_problem(now - 3651 * day, now))
    assert "--max-ahead-seconds" in str(limits.window_problem(now + day + 10**9, now))
    refused = parse_object({**event(1), "timestamp": "1970-01-01T00:00:00Z"})
    assert isinstance(refused, Rejected) and "--max-age-days" in refused.reason
    widened = parse_object(
        {**event(1), "timestamp": "1970-01-01T00:00:00Z"}, EventLimits(max_age_days=36_500)
    )
    assert isinstance(widened, Parsed)


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        ({"score": float("nan")}, "payload.score is nan"),
        ([1, {"x": float("inf")}], "payload[1].x is inf"),
        (float("-inf"), "payload is -inf"),
    ],
)
def test_nan_and_infinity_in_a_payload_are_refused_by_name_not_stored_as_null(payload, where):
    """JSON cannot hold them (the CLI's and HTTP's parsers refuse them as text); a value
    built in Python can, and would be stored as null without a word."""
    refused = parse_object(event(1, payload=payload))
    assert isinstance(refused, Rejected)
    assert refused.reason.startswith(where), refused.reason
    assert "JSON cannot hold" in refused.reason
