"""The validation shortcut (`event_if_plain`) gives exactly what validation gives, or
steps aside: it never accepts what validation refuses, nor builds a different event."""

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from session_recall.core.limits import MAX_ID_CHARS
from session_recall.indexer import EventLimits, Parsed, parse_object
from session_recall.indexer.event import CONTEXT_MAX_TEXT_BYTES, Event, event_if_plain

_NAMES = {
    "event_id": "eventId",
    "user_id": "userId",
    "session_id": "sessionId",
    "contact_id": "contactId",
    "inbox_id": "inboxId",
    "conversation_type": "conversationType",
    "timestamp": "timestamp",
    "type": "type",
    "text": "text",
    "metadata": "metadata",
}
_identifiers = st.one_of(
    st.sampled_from(["alice", "s1", " ", "", "x" * MAX_ID_CHARS, "x" * (MAX_ID_CHARS + 1)]),
    st.text(max_size=5),
)
_stamps = st.sampled_from(
    [
        "2026-07-01T12:00:00Z",
        "2026-07-01T12:00:00.123456789+02:00",
        "2026-07-01t23:59:59,5-0130",
        " 2026-07-01T12:00:00Z ",
        "2026-02-30T12:00:00Z",
        "2026-07-01T24:00:00Z",
        "2026-07-01T12:60:00Z",
        "2026-07-01T12:00:60Z",
        "1969-12-31T23:59:59Z",
        "2262-04-12T00:00:00Z",
        "2026-07-01T12:00:00",
        "2026-07-01T12:00:00+24:00",
        "yesterday",
    ]
)
_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
_values: dict[str, Any] = {
    "event_id": _identifiers | _scalars,
    "user_id": _identifiers | _scalars,
    "session_id": _identifiers | _scalars,
    "contact_id": _identifiers | _scalars,
    "inbox_id": _identifiers | _scalars,
    "conversation_type": _identifiers | _scalars,
    "timestamp": _stamps | _scalars,
    "type": _identifiers | _scalars,
    "text": st.text(max_size=20) | st.sampled_from(["é" * 9, "x" * 40]) | _scalars,
    "metadata": st.none() | st.dictionaries(st.text(max_size=3), _scalars, max_size=3) | _scalars,
}


_plain: dict[str, Any] = {
    **{name: st.sampled_from(["alice", "s1", "é"]) for name in _NAMES},
    "contact_id": st.none() | st.just("c1"),
    "timestamp": _stamps,
    "text": st.text(max_size=20),
    "metadata": st.none() | st.dictionaries(st.text(max_size=3), _scalars, max_size=3),
}


@st.composite
def _objects(draw: st.DrawFn, plain: bool = False) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for name, strategy in (_plain if plain else _values).items():
        spellings = ["absent", "snake", "camel"] if plain else ["absent", "snake", "camel", "both"]
        spelling = draw(st.sampled_from(spellings))
        if spelling in ("snake", "both"):
            value[name] = draw(strategy)
        if spelling in ("camel", "both"):
            value[_NAMES[name]] = draw(strategy)
    if not plain and draw(st.booleans()):
        value[draw(st.sampled_from(["extra", "user-id", "Text"]))] = "x"
    return value


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_objects() | _objects(plain=True), st.sampled_from([10, 1_000_000]))
def test_the_shortcut_builds_what_validation_builds_or_steps_aside(
    value: dict[str, Any], max_text_bytes: int
):
    original = dict(value)
    shortcut = event_if_plain(value, max_text_bytes)
    assert value == original  # the caller's value is left alone
    try:
        validated = Event.model_validate(value, context={CONTEXT_MAX_TEXT_BYTES: max_text_bytes})
    except ValidationError:
        assert shortcut is None
        return
    if shortcut is not None:
        assert shortcut == validated
        assert repr(shortcut) == repr(validated)
        assert shortcut.model_fields_set == validated.model_fields_set
        assert shortcut.model_dump_json() == validated.model_dump_json()


def test_a_plain_event_in_either_spelling_takes_the_shortcut():
    snake = {
        "user_id": "alice",
        "session_id": "s1",
        "timestamp": "2026-07-01T12:00:00Z",
        "type": "user_message",
        "text": "hello",
    }
    camel = {
        "userId": "alice",
        "sessionId": "s1",
        **{k: snake[k] for k in ("timestamp", "type", "text")},
    }
    for value in (snake, camel):
        event = event_if_plain(value, 1_000_000)
        assert event is not None
        assert event == Event.model_validate(value)


def test_a_refused_event_still_gets_validations_explanation():
    parsed = parse_object({"user_id": "alice"}, EventLimits())
    assert not isinstance(parsed, Parsed)
    assert "session_id is required" in parsed.reason
