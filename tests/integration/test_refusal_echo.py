"""A refusal quotes what it refused, cut to a short bound (issue 57, item 23): a
10,000-character event id, instant or field name comes back as its start and its
length, never whole."""

from typing import Any

import pytest
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.core.echo import ECHO_CHARS
from session_recall.http import create_app

pytestmark = pytest.mark.integration

LONG = 10_000
# An answer of one refused event: the result, its reason and the counts.
_ANSWER_BYTES = 1_000


def _event(**fields: Any) -> dict[str, Any]:
    return {
        "event_id": "e-1", "user_id": "alice", "session_id": "s", "type": "user_message",
        "timestamp": "2026-07-01T00:00:00Z", "text": "hello", **fields,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("event", "named"),
    [
        pytest.param(_event(event_id="x" * LONG), "event_id: is 10000 characters", id="id"),
        pytest.param(_event(timestamp="z" * LONG), "is not an ISO-8601 instant", id="instant"),
        pytest.param({**_event(), "k" * LONG: 1}, "unknown field", id="field-name"),
    ],
)
def test_a_refused_long_value_is_echoed_cut_in_the_422(
    settings: Settings, event: dict[str, Any], named: str
) -> None:
    with TestClient(create_app(settings, enrich=False)) as web:
        answer = web.post("/v1/events", json=[event])

    assert answer.status_code == 422, answer.text
    assert len(answer.content) < _ANSWER_BYTES, answer.text[:300]
    [result] = answer.json()["results"]
    assert named in result["reason"], result
    assert "[truncated, 10,000 characters]" in answer.text
    assert "x" * (ECHO_CHARS + 1) not in result.get("event_id", "")
