"""An event's `payload`: any JSON the producer wants back as it was, on every surface.
It is stored and returned by the reads, never indexed: recall searches `text`."""

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.support import native as native_core
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


# Integers beyond 64 bits: every JSON reader on the way (orjson's, the client's,
# Elasticsearch's) would read them as the nearest float, so each path refuses them by
# name. The widest that stay exact are stored as they are.
EDGE = {"high": 2**64 - 1, "low": -(2**63)}
WIDE = [
    ({"payload": {"count": 2**64}}, "payload.count holds the integer 18446744073709551616"),
    ({"payload": [1, {"x": -(2**63) - 1}]}, "payload[1].x holds the integer -9223372036854775809"),
    ({"metadata": {"n": 2**70}}, "metadata.n holds the integer 1180591620717411303424"),
]


def _wide_events(user: str) -> list[dict[str, object]]:
    edge = {**_event(0, EDGE, session="s-wide"), "user_id": user}
    return [edge] + [
        {**_event(i, None, session="s-wide"), "user_id": user, **fields}
        for i, (fields, _) in enumerate(WIDE, 1)
    ]


def _lines(events: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()  # integers exact


def test_ingest_refuses_integers_beyond_64_bits_by_name_alike_on_both_paths(
    settings, es_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from click.testing import CliRunner

    from session_recall.cli import main

    reasons = {}
    for native in ("0", "1"):
        if native == "1":
            native_core.require_core()  # after the Python path: skips or fails, saying why
        monkeypatch.setenv("SESSION_RECALL_NATIVE", native)
        user = f"u-wide-{native}"
        feed = tmp_path / f"wide-{native}.ndjson"
        feed.write_bytes(_lines(_wide_events(user)))
        dead = tmp_path / f"dead-{native}.ndjson"
        args = ["--index", settings.index, "--es-url", es_url, "ingest", str(feed)]
        result = CliRunner().invoke(main, [*args, "--dead-letter", str(dead), "--no-enrich"])
        assert result.exit_code == 1, result.output
        assert "indexed 1, already present 0, rejected 3" in result.output, result.output
        letters = [json.loads(line) for line in dead.read_bytes().splitlines()]
        reasons[native] = [letter["reason"] for letter in letters]
        for reason, (_, named) in zip(reasons[native], WIDE, strict=True):
            assert named in reason, reason
        shown = CliRunner().invoke(
            main,
            ["--index", settings.index, "--es-url", es_url, "show", "--user", user,
             "--session", "s-wide", "--format", "json"],
        )  # fmt: skip
        assert shown.exit_code == 0, shown.output
        assert [item["payload"] for item in json.loads(shown.output)["items"]] == [EDGE]
    assert reasons["1"] == reasons["0"]


@pytest.mark.parametrize("kind", ["application/x-ndjson", "application/json"])
@pytest.mark.parametrize("native", native_core.PATHS)
def test_serve_refuses_integers_beyond_64_bits_by_name_and_keeps_the_others(
    settings, kind: str, native: str, monkeypatch: pytest.MonkeyPatch
):
    from starlette.testclient import TestClient

    from session_recall.http import create_app

    monkeypatch.setenv("SESSION_RECALL_NATIVE", native)
    user = f"u-wide-http-{native}-{kind.rsplit('/', 1)[-1]}"
    events = _wide_events(user)
    body = _lines(events) if kind != "application/json" else json.dumps(events).encode()
    with TestClient(create_app(settings, enrich=False)) as web:
        answer = web.post(
            "/v1/events?refresh=wait_for", content=body, headers={"content-type": kind}
        )
        assert answer.status_code == 422, answer.text
        results = answer.json()["results"]
        assert [r["status"] for r in results] == ["indexed", "rejected", "rejected", "rejected"]
        for result, (_, named) in zip(results[1:], WIDE, strict=True):
            assert named in result["reason"], result["reason"]
        page = web.get(f"/v1/users/{user}/sessions/s-wide/events")
        assert page.status_code == 200, page.text
        assert [item["payload"] for item in page.json()["items"]] == [EDGE]
