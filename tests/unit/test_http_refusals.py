"""What the HTTP app refuses before any request: bodies, tokens, tool arguments, ids,
paths and query parameters, each in the one error shape `{"error", "hint"?}` with no
null field. The app's client records every call, and nothing answers it."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.http.events import events_group
from session_recall.http.limits import ServeLimits
from tests.support.ndjson import event
from tests.support.recording import RecordingClient
from tests.support.samples import THOUGHT

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ALICE = "/v1/users/alice/tools/cross_session_search"
CONTACT_TOOL = "/v1/users/alice/contacts/c/inboxes/i/tools/cross_conversation_search"
ARGUMENTS = {"innerThought": "t", "query": "x"}
JSON = {"content-type": "application/json"}
TEXT = {"content-type": "text/plain"}


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
    with TestClient(create_app(settings, client=client, token=TOKEN, enrich=False)) as web:  # type: ignore[arg-type]
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
    groups, limits = [events_group], ServeLimits(max_body_bytes=1_024)
    app = create_app(settings, client=client, groups=groups, limits=limits, enrich=False)  # type: ignore[arg-type]
    with TestClient(app) as web:
        response = web.post("/v1/events", content=content, headers={"content-type": content_type})
    assert response.status_code == status, response.text
    assert response.json()["error"]
    assert client.calls == []


def test_a_key_given_twice_is_refused_in_json(web: TestClient, client: RecordingClient):
    twice = (
        b'{"userId": "alice", "userId": "bob", "sessionId": "s", "eventId": "e-1", '
        b'"timestamp": "2026-07-01T00:00:00Z", "type": "user_message", "text": "hi"}'
    )
    whole = web.post(
        "/v1/events", content=twice, headers={**AUTH, "content-type": "application/json"}
    )
    assert whole.status_code == 400, whole.text
    assert "'userId' is given twice" in whole.json()["error"]
    assert client.calls == []
    # In NDJSON the line alone is refused: tests/integration/test_deep_lines.py.


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


@pytest.mark.parametrize("fmt", ["tool", "page"])
def test_a_user_id_past_the_ingest_limit_is_refused_not_a_500(
    web: TestClient, client: RecordingClient, fmt: str
):
    body = {"innerThought": THOUGHT, "query": "x"}
    path = f"/v1/users/{'u' * 10_000}/tools/cross_session_search"
    response = web.post(f"{path}?format={fmt}", json=body, headers=AUTH)
    # The scope in the path is the application's, not the model's: the JSON error
    # shape, with the status of every refused value (422).
    assert response.status_code == 422, response.text
    assert response.json()["error"].startswith("user_id is 10000 characters long")
    assert "the limit is 512" in response.text and "privilege" not in response.text
    assert client.calls == []


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/v1/users/%FF"),  # read leniently, U+FFFD: the same user as %FE
        ("DELETE", "/v1/users/alice/events/e%C3"),  # half a character
        ("POST", "/v1/users/%FE%2Fx/tools/cross_session_search"),
        ("GET", "/v1/users/alice/sessions/%80/events"),
    ],
)
def test_a_path_segment_that_is_not_utf8_is_refused(
    web: TestClient, client: RecordingClient, method: str, path: str
):
    body = {"innerThought": THOUGHT, "query": "x"}
    response = web.request(method, path, headers=AUTH, json=body)
    assert response.status_code == 400, response.text
    assert "not UTF-8" in _error_shape(response)["error"]
    assert client.calls == []


def test_every_id_in_a_route_path_is_decoded_on_its_own(settings: Settings):
    """A route taking an id with Starlette's plain `str` convertor would get it still
    encoded (`a%2Fb`, another user than `a/b`): every one takes the `id` convertor."""
    app = create_app(settings, client=RecordingClient(), enrich=False)  # type: ignore[arg-type]
    convertors = {
        (route.path, name): type(convertor).__name__
        for route in app.routes
        for name, convertor in getattr(route, "param_convertors", {}).items()
    }
    assert len(convertors) >= 10  # users, sessions, contacts, inboxes, events
    assert set(convertors.values()) == {"_IdConvertor"}, convertors


def test_a_valid_tool_call_does_reach_the_client(web: TestClient, client: RecordingClient):
    # What the empty call lists above rule out: a call that passes goes to the node.
    response = web.post(ALICE, json={"innerThought": THOUGHT, "query": "x"}, headers=AUTH)
    assert response.status_code == 503, response.text
    assert client.calls


def _error_shape(response) -> dict:
    body = response.json()
    assert set(body) <= {"error", "hint"} and "error" in body, body
    assert all(isinstance(value, str) and value for value in body.values()), body
    return body


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("GET", "/v1/nothing-here", {}, 404),
        ("GET", "/v1/events", {}, 405),
        ("PUT", "/v1/users/alice", {}, 405),
        ("POST", "/v1/events", {"content": b"{broken", "headers": JSON}, 400),
        ("POST", "/v1/events", {"content": b"x", "headers": TEXT}, 415),
        ("POST", "/v1/events?refresh_all=true", {"json": event(1)}, 400),
        ("DELETE", "/v1/users/alice?dry=1", {}, 400),
        ("DELETE", "/v1/users/%20", {}, 422),
        ("POST", f"{ALICE}?lookback_days=5", {"json": ARGUMENTS}, 400),
        ("POST", f"{ALICE}?page_size=0", {"json": ARGUMENTS}, 422),
        ("POST", ALICE, {"content": b'{"query": "x"}', "headers": TEXT}, 415),
        ("POST", ALICE, {"content": b"{nope", "headers": JSON}, 400),
        ("POST", f"{ALICE}?format=page", {"json": {"query": "x"}}, 422),
    ],
)  # fmt: skip
def test_every_refusal_has_the_one_error_shape(
    web: TestClient, client: RecordingClient, method, path, kwargs, status
):
    kwargs = dict(kwargs)
    response = web.request(method, path, headers={**AUTH, **kwargs.pop("headers", {})}, **kwargs)
    assert response.status_code == status, response.text
    _error_shape(response)
    assert client.calls == []


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/v1/events/"), ("GET", "/healthz/"), ("DELETE", "/v1/users/alice/")],
)
def test_a_trailing_slash_is_a_404_in_the_error_shape_not_an_empty_redirect(
    web: TestClient, client: RecordingClient, method: str, path: str
):
    response = web.request(method, path, headers=AUTH, json=event(1), follow_redirects=False)
    assert response.status_code == 404, response.text
    assert _error_shape(response)["hint"].startswith("No path ends with '/'.")
    assert client.calls == []


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/users/%20", "user_id"),
        ("/v1/users/du/events/%20", "event_id"),
        ("/v1/users/du/sessions/%09", "session_id"),
        ("/v1/users/du/contacts/c/inboxes/%20", "inbox_id"),
        (f"/v1/users/{'u' * 513}", "user_id"),
    ],
)
def test_an_erasure_refuses_a_bad_id_as_the_reads_do_naming_it(
    web: TestClient, client: RecordingClient, path: str, field: str
):
    """422 and the field's name, as `GET /v1/users/%20/sessions` and the tools answer."""
    response = web.delete(path, headers=AUTH)
    assert response.status_code == 422, response.text
    assert _error_shape(response)["error"].startswith(f"{field} ")
    if field == "user_id":  # word for word what the read of that user answers
        read = web.get(f"{path}/sessions", headers=AUTH)
        assert (read.status_code, read.json()) == (422, response.json())
    assert client.calls == []


def test_a_method_not_allowed_names_the_allowed_one(web: TestClient):
    response = web.get("/v1/events", headers=AUTH)
    assert response.headers["allow"] == "POST"
    assert "POST" in _error_shape(response)["error"]


def test_unknown_query_parameters_are_refused_by_name(web: TestClient, client: RecordingClient):
    response = web.post(f"{ALICE}?lookback_days=5", json=ARGUMENTS, headers=AUTH)
    body = _error_shape(response)
    assert "'lookback_days'" in body["error"] and "page_size" in body["hint"]
    assert client.calls == []
    # The contact tool takes it: the call goes on to Elasticsearch (which is not there).
    taken = web.post(f"{CONTACT_TOOL}?lookback_days=5", json=ARGUMENTS, headers=AUTH)
    assert taken.status_code == 503, taken.text
    assert client.calls


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_bearer_scheme_is_case_insensitive(
    web: TestClient, client: RecordingClient, scheme: str
):
    response = web.post(ALICE, json=ARGUMENTS, headers={"Authorization": f"{scheme} {TOKEN}"})
    # Let in: the call goes on to Elasticsearch (which is not there).
    assert response.status_code == 503, response.text
    assert client.calls


@pytest.mark.parametrize("header", [f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer", TOKEN])
def test_anything_but_the_token_is_refused(web: TestClient, client: RecordingClient, header: str):
    response = web.post(ALICE, json=ARGUMENTS, headers={"Authorization": header})
    assert response.status_code == 401
    _error_shape(response)
    assert client.calls == []


def test_a_503_tells_the_client_to_try_again_not_to_run_a_command(settings: Settings):
    """No node listens at the settings' URL: a write gives up when out of tries, an
    erasure at its deadline (sooner than its ten tries), each with a hint a client of
    the sidecar can act on, as a user of the CLI can."""
    answers = []
    for write_deadline, method, path, body in [
        (60.0, "POST", "/v1/events", event(1)),
        (1.0, "DELETE", "/v1/users/alice", None),
    ]:
        limits = ServeLimits(write_deadline=write_deadline)
        with TestClient(create_app(settings, enrich=False, limits=limits)) as web:
            answers.append(web.request(method, path, json=body))
    for answer in answers:
        assert answer.status_code == 503, answer.text
        hint = _error_shape(answer)["hint"]
        assert "try again" in hint and "command" not in hint, hint
