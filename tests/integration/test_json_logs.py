"""`serve --log-format json`: one JSON object per line, with the request id the answer
carries; and at info and above, never a credential, a token, an event's text or a
query's words, whatever the requests (stored, refused, searched, unauthorized)."""

import json
import secrets
from pathlib import Path

import httpx
import pytest

from session_recall.node import wait_until
from tests.support.ndjson import event
from tests.support.serve import serving
from tests.support.tokens import issue_token

pytestmark = pytest.mark.integration

# Words that occur in events and queries alone.
EVENT_WORDS = ("zanzibar", "quokka", "periwinkle", "marmalade")
QUERY_WORDS = ("lighthouse", "tangerine", "saxophone", "wombat")
FIELDS = {"time", "level", "logger", "message", "request_id"}
# Ids of the requests' paths and bodies, which no line may hold either.
USER, OTHER_USER = "usr-larkspurwing", "usr-bramblecoot"
SESSION = "sess-quillmoor"
EVENT_IDS = ("evt-tansyreef", "evt-marlinspike")


def test_json_log_lines_hold_the_request_id_and_no_secret_nor_words(
    es_url: str, alias: str, tmp_path: Path
):
    operator = f"operator-{secrets.token_hex(12)}"
    api_key = f"apikey-{secrets.token_hex(12)}"
    wrong = f"wrong-{secrets.token_hex(12)}"
    user_token = issue_token(
        {"SESSION_RECALL_HOME": str(tmp_path / "home"), "SESSION_RECALL_INDEX": alias},
        "--user",
        USER,
        "--can",
        "read",
        "--ttl",
        "1h",
    )
    env = {"SESSION_RECALL_LOG_FORMAT": "json", "ELASTICSEARCH_API_KEY": api_key}
    with serving(
        es_url=es_url, alias=alias, folder=tmp_path, token=operator, log_level="info", env=env,
        stdout_too=True,
    ) as served:  # fmt: skip
        as_operator = {"authorization": f"Bearer {operator}"}
        as_ana = {"authorization": f"Bearer {user_token}"}
        with httpx.Client(base_url=served.url, timeout=30) as web:
            events = [
                event(
                    1,
                    user=USER,
                    session=SESSION,
                    event_id=EVENT_IDS[0],
                    text="zanzibar quokka at dawn",
                ),
                event(
                    2,
                    user=USER,
                    session=SESSION,
                    event_id=EVENT_IDS[1],
                    text="zanzibar quokka at dusk",
                ),
                {"user_id": USER, "type": "user_message", "text": "periwinkle marmalade"},
            ]
            stored = web.post(
                "/v1/events?refresh=wait_for",
                json=events,
                headers={**as_operator, "x-request-id": "grep-req-1"},
            )
            assert stored.status_code == 422, stored.text  # the second has no timestamp
            assert stored.headers["x-request-id"] == "grep-req-1"
            tool = "/v1/users/{user}/tools/{tool}"
            found = web.post(
                tool.format(user=USER, tool="cross_session_search"),
                json={"innerThought": "lighthouse", "query": "zanzibar quokka"},
                headers=as_ana,
            )
            assert found.status_code == 200 and "zanzibar" in found.text
            # A cursor of one query sent with another: the search fails, with a warning.
            search = tool.format(user=USER, tool="cross_session_search")
            page = web.post(
                search,
                params={"format": "page", "page_size": 1},
                json={"innerThought": "x", "query": "zanzibar quokka"},
                headers=as_ana,
            )
            cursor = page.json()["next_cursor"]
            mismatch = web.post(
                search,
                params={"cursor": cursor},
                json={"innerThought": "x", "query": "lighthouse tangerine"},
                headers=as_ana,
            )
            assert mismatch.status_code == 422, mismatch.text
            bad = web.post(
                tool.format(user=USER, tool="memory_search"),
                json={"innerThought": "tangerine saxophone", "query": "", "limit": "wombat"},
                headers=as_ana,
            )
            assert bad.status_code == 422
            # A caller's mistake that only the search finds: logged at info, unechoed.
            undated = [
                web.post(
                    tool.format(user=USER, tool=name),
                    json={"innerThought": "x", "query": "zanzibar", "since": "leakwordb-no-date"},
                    headers=as_ana,
                )
                for name in ("memory_search", "cross_session_search")
            ]
            assert [answer.status_code for answer in undated] == [422, 422], undated[0].text
            other = web.post(
                tool.format(user=OTHER_USER, tool="cross_session_search"),
                json={"innerThought": "x", "query": "lighthouse tangerine"},
                headers=as_ana,
            )
            assert other.status_code == 403
            refused = web.get(
                f"/v1/users/{USER}/sessions", headers={"authorization": f"Bearer {wrong}"}
            )
            assert refused.status_code == 401
            # The enrichment of the stored event, logged (or not) before serve stops.
            assert wait_until(lambda: "enrichment_pending" in web.get("/readyz").json(), timeout=60)
    lines = [line for line in served.log_text().splitlines() if line.strip()]

    records = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all(set(record) >= FIELDS for record in records), records[:3]
    assert any(record["request_id"] == "grep-req-1" for record in records), lines
    loud = [r for r in records if r["level"] in ("INFO", "WARNING", "ERROR", "CRITICAL")]
    # Callers' mistakes are no warnings: each refused search is an info line, written in
    # a read lane's thread, that names its request and the error's class alone.
    assert [r for r in loud if r["level"] != "INFO"] == [], lines
    refused_here = [r for r in loud if r["logger"] == "session_recall.tools.bound_tool"]
    asked = [mismatch, *undated]
    assert [r["request_id"] for r in refused_here] == [a.headers["x-request-id"] for a in asked]
    text = "\n".join(json.dumps(record) for record in loud).lower()
    held = [operator, api_key, wrong, user_token, *EVENT_WORDS, *QUERY_WORDS, cursor, "leakword"]
    held += [USER, OTHER_USER, SESSION, *EVENT_IDS]
    for secret in held:
        assert secret.lower() not in text, secret


def test_the_warning_at_start_is_a_json_line_too(es_url: str, alias: str, tmp_path: Path):
    env = {"SESSION_RECALL_LOG_FORMAT": "json"}
    with serving(es_url=es_url, alias=alias, folder=tmp_path, log_level="info", env=env) as served:
        pass
    records = [json.loads(line) for line in served.log_text().splitlines() if line.strip()]
    [warning] = [r for r in records if "serving without any token" in r["message"]]
    assert warning["level"] == "WARNING" and warning["logger"] == "session_recall.cli.serve"
