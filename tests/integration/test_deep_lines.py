"""One line nested deeper than any parser takes never blocks the others: `ingest`
dead-letters it and stores the rest, on both paths; `POST /v1/events` refuses that
event alone (422), as it does a line that gives a key twice."""

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.http import create_app
from tests.support import native as native_core
from tests.support.ndjson import event, stored

pytestmark = pytest.mark.integration

DEEP = 254  # one level past what orjson renders; 250 passed before


def _deep_line(i: int) -> bytes:
    metadata = b'{"a":' * DEEP + b"{}" + b"}" * DEEP
    return orjson.dumps(event(i))[:-1] + b',"metadata":' + metadata + b"}"


BODY = orjson.dumps(event(1)) + b"\n" + _deep_line(2) + b"\n" + orjson.dumps(event(3)) + b"\n"


@pytest.mark.parametrize("native", native_core.PATHS)
def test_ingest_dead_letters_a_deep_line_and_stores_the_others(
    es_url: str, es: Elasticsearch, alias: str, tmp_path: Path, monkeypatch, native: str
):
    monkeypatch.setenv("SESSION_RECALL_NATIVE", native)
    source = tmp_path / "events.ndjson"
    source.write_bytes(BODY)
    dead = tmp_path / "dead.ndjson"

    result = CliRunner().invoke(
        main,
        ["--index", alias, "--es-url", es_url, "ingest", str(source), "--dead-letter", str(dead)],
    )

    assert result.exit_code == 1, result.output
    assert "Read 3, indexed 2, already present 0, rejected 1" in result.output
    [letter] = [orjson.loads(line) for line in dead.read_bytes().splitlines()]
    assert letter["reason"].startswith("line 2: not valid JSON: the value nests more than")
    assert stored(es, alias) == 2


@pytest.mark.parametrize("kind", ["application/x-ndjson", "application/json"])
def test_serve_refuses_the_deep_event_alone(
    settings: Settings, es: Elasticsearch, alias: str, kind: str
):
    body = BODY if kind != "application/json" else b"[" + BODY.strip().replace(b"\n", b",") + b"]"
    with TestClient(create_app(settings)) as web:
        response = web.post("/v1/events", content=body, headers={"content-type": kind})

    if kind == "application/json":
        # The whole body is one JSON value: too deep to read, it is refused whole.
        assert response.status_code == 400, response.text
        assert "nests more than" in response.json()["error"]
        assert stored(es, alias) == 0
        return
    assert response.status_code == 422, response.text
    assert [r["status"] for r in response.json()["results"]] == ["indexed", "rejected", "indexed"]
    assert "nests more than" in response.json()["results"][1]["reason"]
    es.indices.refresh(index=alias)
    assert stored(es, alias) == 2


def test_serve_refuses_a_line_that_gives_a_key_twice_alone(
    settings: Settings, es: Elasticsearch, alias: str
):
    twice = orjson.dumps(event(2))[:-1] + b',"user_id": "bob"}'
    body = orjson.dumps(event(1)) + b"\n" + twice + b"\n"
    with TestClient(create_app(settings, enrich=False)) as web:
        response = web.post(
            "/v1/events", content=body, headers={"content-type": "application/x-ndjson"}
        )

    assert response.status_code == 422, response.text
    assert [r["status"] for r in response.json()["results"]] == ["indexed", "rejected"]
    assert "'user_id' is given twice" in response.json()["results"][1]["reason"]
