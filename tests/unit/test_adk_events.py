"""ADK events as ours: an event's instant survives ADK's own session stores, which keep
its time as a `datetime` (to the microsecond) and give it back as a float."""

from google.adk.events.event import Event as AdkEvent
from google.adk.sessions.schemas.shared import timestamp_to_utc_datetime, utc_datetime_to_timestamp
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.instant import Instant
from session_recall.integrations.adk.events import from_adk_event

# ADK's float seconds over the range an instant holds (1970 to 2262).
timestamps = st.floats(min_value=0, max_value=9_200_000_000, allow_nan=False)


def _instant(timestamp: float) -> Instant:
    said = AdkEvent(id="e1", author="user", timestamp=timestamp, content=types.UserContent("hi"))
    event = from_adk_event(said, user_id="shop/ana", session_id="s1")
    assert event is not None
    return event.timestamp


def _reloaded(timestamp: float) -> float:
    """The timestamp as `DatabaseSessionService` gives it back: through its column."""
    return utc_datetime_to_timestamp(timestamp_to_utc_datetime(timestamp))


@given(timestamps)
def test_an_event_has_the_same_instant_before_and_after_a_database_round_trip(timestamp):
    assert _instant(_reloaded(timestamp)) == _instant(timestamp)


@given(timestamps, st.floats(min_value=2e-6, max_value=1e6))
def test_events_of_one_session_keep_their_order_and_stay_apart(timestamp, gap):
    later = timestamp + gap
    assert _instant(timestamp) < _instant(later)
    assert _instant(_reloaded(timestamp)) < _instant(_reloaded(later))
