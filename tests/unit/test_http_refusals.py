"""What the HTTP app refuses before any request: bodies, tokens, tool arguments and
paths. The app's client records every call, and nothing answers it."""

import functools
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.http.events import events_group
from tests.support.ndjson import event
from tests.support.recording import RecordingClient
from tests.support.samples import THOUGHT

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ALICE = "/v1/users/alice/tools/cross_session_search"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        ELASTICSEARCH_URL="http://127.0.0.1:9",
        SESSION_RECALL_INDEX="any-alias",
        SESSION_RECALL_HOME=tmp_path,
    )


@pytest.fixture
def client() -> RecordingClient:
    return RecordingClient()


@pytest.fixture
def web(settings: Settings, client: RecordingClient) -> Iterator[TestClient]:
    with TestClient(create_app(settings, client=client, token=TOKEN)) as web:  # type: ignore[arg-type]
        yield web


@pytest.mark.parametrize(
    ("content", "content_type", "status"),
    [
        (b"{broken", "application/json", 400),
        (b"[]", "application/json", 400),
        (b"<xml/>", "application/xml", 415),
        (b"x" * 2_000, "application/json", 413),
    ],
)
def test_unusable_bodies_are_refused_whole(
    settings: Settings, client: RecordingClient, content, content_type, status
):
    groups = [functools.partial(events_group, max_body_bytes=1_000)]
    with TestClient(create_app(settings, client=client, groups=groups)) as web:  # type: ignore[arg-type]
        response = web.post("/v1/events", content=content, headers={"content-type": content_type})
    assert response.status_code == status, response.text
    assert response.json()["error"]
    assert client.calls == []


def test_the_token_is_required_except_on_probes_and_the_schema(
    web: TestClient, client: RecordingClient
):
    assert web.post("/v1/events", json=event(1)).status_code == 401
    wrong = web.post("/v1/events", json=event(1), headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"] == "Bearer"
    assert TOKEN not in wrong.text
    assert web.delete("/v1/users/alice").status_code == 401
    tool = web.post(ALICE, json={"innerThought": THOUGHT, "query": "x"})
    assert tool.status_code == 401
    assert THOUGHT not in tool.text
    assert client.calls == []
    assert web.get("/healthz").status_code == 200
    assert web.get("/openapi.json").status_code == 200
    # The readiness probe asks Elasticsearch without the token (here nothing answers).
    assert web.get("/readyz").status_code == 503
    assert client.calls


@pytest.mark.parametrize("smuggled", ["userId", "user", "sessionId", "index"])
def test_a_scope_argument_in_the_body_is_refused(
    web: TestClient, client: RecordingClient, smuggled: str
):
    body = {"innerThought": THOUGHT, "query": "launch", smuggled: "bob"}
    response = web.post(ALICE, json=body, headers=AUTH)
    assert response.status_code == 422
    assert response.text.startswith(f"Error: unknown argument '{smuggled}'")
    assert THOUGHT not in response.text
    assert client.calls == []


def test_invalid_arguments_get_the_models_error_line(web: TestClient, client: RecordingClient):
    body = {"innerThought": THOUGHT, "query": "x", "since": "2026-07-01"}
    response = web.post(ALICE, json=body, headers=AUTH)
    assert response.status_code == 422
    assert "2026-07-01T00:00:00Z" in response.text
    assert client.calls == []


@pytest.mark.parametrize(
    ("method", "path"),
    [
        # Decoded, this would erase session s1 of user bob.
        ("DELETE", "/v1/users/bob%2Fsessions%2Fs1"),
        ("POST", "/v1/users/alice%2fx/tools/cross_session_search"),
    ],
)
def test_an_encoded_slash_in_an_id_is_refused(
    web: TestClient, client: RecordingClient, method: str, path: str
):
    body = {"innerThought": THOUGHT, "query": "x"}
    response = web.request(method, path, headers=AUTH, json=body)
    assert response.status_code == 400
    assert "encoded slash" in response.json()["error"]
    assert client.calls == []


def test_a_valid_tool_call_does_reach_the_client(web: TestClient, client: RecordingClient):
    # What the empty call lists above rule out: a call that passes goes to the node.
    response = web.post(ALICE, json={"innerThought": THOUGHT, "query": "x"}, headers=AUTH)
    assert response.status_code == 503, response.text
    assert client.calls
