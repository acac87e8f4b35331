"""serve's access log, at its default level (info): one line per request with the
method, the route template, the status and the request id; never an id of the path
(user, session, contact, inbox, event), the query string (a cursor, `current_session`,
`?access_token=`), nor a token, in any line of the log."""

import secrets
from pathlib import Path

import httpx
import pytest

from tests.support.serve import serving
from tests.support.tokens import issue_token

pytestmark = pytest.mark.integration

# Ids that no message, route or word of the log holds by chance.
USER = "usr-quillfeather"
SESSION = "sess-orchidvane"
OTHER_SESSION = "sess-heronlatch"
EVENTS = ("evt-vermilionax", "evt-cobaltwisp", "evt-saffronkeel")
CONTACT = "ctc-pelicandrum"
INBOX = "ibx-gannetspire"


def _events() -> list[dict[str, object]]:
    return [
        {
            "event_id": event_id,
            "user_id": USER,
            "session_id": OTHER_SESSION if i == 2 else SESSION,
            "contact_id": CONTACT,
            "inbox_id": INBOX,
            "timestamp": f"2026-07-01T00:00:0{i}Z",
            "type": "user_message",
            "text": f"note {i} on the weather",
        }
        for i, event_id in enumerate(EVENTS)
    ]


def test_access_lines_name_routes_and_request_ids_never_ids_nor_tokens(
    es_url: str, alias: str, tmp_path: Path
):
    operator = f"operator-{secrets.token_hex(12)}"
    jwt = issue_token(
        {"SESSION_RECALL_HOME": str(tmp_path / "home"), "SESSION_RECALL_INDEX": alias},
        "--user",
        USER,
        "--can",
        "read,erase",
    )
    # Served at serve's default level, info, with stdout (uvicorn's access lines) kept.
    with serving(
        es_url=es_url, alias=alias, folder=tmp_path, token=operator, log_level="info",
        stdout_too=True,
    ) as served:  # fmt: skip
        as_operator = {"authorization": f"Bearer {operator}"}
        as_user = {"authorization": f"Bearer {jwt}"}
        sessions = f"/v1/users/{USER}/sessions"
        with httpx.Client(base_url=served.url, timeout=30) as web:
            stored = web.post("/v1/events?refresh=wait_for", json=_events(), headers=as_operator)
            assert stored.status_code == 200, stored.text
            # The token in the query string: refused, and never written down.
            smuggled = web.get(
                sessions, params={"access_token": jwt}, headers={"x-request-id": "acc-1"}
            )
            assert smuggled.status_code == 401
            listed = web.get(sessions, params={"page_size": 1}, headers=as_user)
            assert listed.status_code == 200, listed.text
            cursor = listed.json()["next_cursor"]
            events_path = f"{sessions}/{SESSION}/events"
            page = web.get(events_path, params={"page_size": 1}, headers=as_user)
            event_cursor = page.json()["next_cursor"]
            cursors = [cursor, event_cursor]
            assert all(cursors), page.text
            for path, value in ((sessions, cursor), (events_path, event_cursor)):
                again = web.get(path, params={"cursor": value, "page_size": 1}, headers=as_user)
                assert again.status_code == 200, again.text
            inbox = f"/v1/users/{USER}/contacts/{CONTACT}/inboxes/{INBOX}"
            tool = f"{inbox}/tools/cross_conversation_search"
            found = web.post(
                tool,
                params={"current_session": SESSION},
                json={"innerThought": "x", "query": "weather"},
                headers=as_user,
            )
            assert found.status_code == 200, found.text
            erased = web.delete(f"/v1/users/{USER}/events/{EVENTS[0]}", headers=as_user)
            assert erased.status_code == 200, erased.text
            assert web.get(f"/v1/nowhere/{USER}", headers=as_operator).status_code == 404
    log = served.log_text()  # complete: serve has finished every request and stopped
    template = "GET /v1/users/{user}/sessions 401"
    assert f"{template}" in log and "request=acc-1" in log, log[-3000:]
    assert "DELETE /v1/users/{user}/events/{event} 200" in log, log[-3000:]
    assert "GET unmatched 404" in log, log[-3000:]
    held = [USER, SESSION, OTHER_SESSION, *EVENTS, CONTACT, INBOX, jwt, operator, *cursors]
    held += jwt.split(".")
    assert [value for value in held if value in log] == [], log[-3000:]
