"""An event's `payload`: any JSON the producer wants back as it was, on every surface.
It is stored and returned by the reads, never indexed: recall searches `text`."""

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.support.cli import CLI
from tests.support.serve import serving

pytestmark = pytest.mark.integration

PAYLOADS = [
    {"type": "function_call", "name": "lookup", "arguments": '{"city": "Zürich"}', "n": 1.5},
    [1, "two", {"three": [3.0, None, True]}],
    "a string, 東京",
]


def _event(i: int, payload: object, session: str = "s-payload") -> dict[str, object]:
    event: dict[str, object] = {
        "user_id": "u-payload",
        "session_id": session,
        "timestamp": f"2026-03-01T10:00:0{i}Z",
        "type": "tool_call",
        "text": f"lookup number {i}",
        "event_id": f"e{i}",
    }
    if payload is not None:
        event["payload"] = payload
    return event


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=120)


def test_ingest_and_show_give_each_payload_back_as_it_went_in(
    settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    env = {
        **os.environ,
        "ELASTICSEARCH_URL": settings.elasticsearch_url,
        "SESSION_RECALL_INDEX": settings.index,
        "SESSION_RECALL_HOME": str(settings.home),
        "SESSION_RECALL_EMBEDDER": "none",
    }
    lines = [_event(i, p) for i, p in enumerate([*PAYLOADS, None])]
    feed = tmp_path / "events.ndjson"
    feed.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    stored = _run("ingest", str(feed), env=env)
    assert stored.returncode == 0, stored.stderr

    shown = _run(
        "show", "--user", "u-payload", "--session", "s-payload", "--format", "json", env=env
    )
    assert shown.returncode == 0, shown.stderr
    items = json.loads(shown.stdout)["items"]
    assert [item.get("payload") for item in items] == [*PAYLOADS, None]
    assert "payload" not in items[-1]  # an event without one shows none, not null

    # Recall searches the text, never the payload.
    found = _run("search", "--user", "u-payload", "Zürich", "--format", "json", env=env)
    assert found.returncode == 0 and json.loads(found.stdout)["items"] == [], found.stdout
    found = _run("search", "--user", "u-payload", "lookup", "--format", "json", env=env)
    assert len(json.loads(found.stdout)["items"]) == 4


def test_serve_takes_and_returns_payloads(settings, tmp_path: Path):
    with serving(es_url=settings.elasticsearch_url, alias=settings.index, folder=tmp_path) as web:
        for i, payload in enumerate(PAYLOADS):
            answer = httpx.post(
                f"{web.url}/v1/events?refresh=wait_for",
                json=_event(i, payload, session="s-http"),
                timeout=30,
            )
            assert answer.status_code in (200, 201), answer.text
        page = httpx.get(f"{web.url}/v1/users/u-payload/sessions/s-http/events", timeout=30)
        assert page.status_code == 200, page.text
        assert [item["payload"] for item in page.json()["items"]] == PAYLOADS
        schema = httpx.get(f"{web.url}/openapi.json", timeout=30).text
        assert "payload" in schema
