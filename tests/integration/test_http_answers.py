"""Every HTTP refusal has one JSON shape, `{"error", "hint"?}` with no null field, the
app's own 404 and 405 included; query parameters an endpoint does not take are refused;
the recall endpoints take JSON only, as /v1/events does; the bearer scheme is
case-insensitive."""

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from tests.support.ndjson import event

pytestmark = pytest.mark.integration

TOKEN = "answers-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TOOL = "/v1/users/alice/tools/cross_session_search"
CONTACT_TOOL = "/v1/users/alice/contacts/c/inboxes/i/tools/cross_conversation_search"
ARGUMENTS = {"innerThought": "t", "query": "x"}
JSON = {"content-type": "application/json"}
TEXT = {"content-type": "text/plain"}


@pytest.fixture
def web(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, token=TOKEN)) as client:
        yield client


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
        ("DELETE", "/v1/users/%20", {}, 400),
        ("POST", f"{TOOL}?lookback_days=5", {"json": ARGUMENTS}, 400),
        ("POST", f"{TOOL}?page_size=0", {"json": ARGUMENTS}, 400),
        ("POST", TOOL, {"content": b'{"query": "x"}', "headers": TEXT}, 415),
        ("POST", TOOL, {"content": b"{nope", "headers": JSON}, 400),
        ("POST", f"{TOOL}?format=page", {"json": {"query": "x"}}, 422),
    ],
)  # fmt: skip
def test_every_refusal_has_the_one_error_shape(web: TestClient, method, path, kwargs, status):
    kwargs = dict(kwargs)
    response = web.request(method, path, headers={**AUTH, **kwargs.pop("headers", {})}, **kwargs)
    assert response.status_code == status, response.text
    _error_shape(response)


def test_a_method_not_allowed_names_the_allowed_one(web: TestClient):
    response = web.get("/v1/events", headers=AUTH)
    assert response.headers["allow"] == "POST"
    assert "POST" in _error_shape(response)["error"]


def test_unknown_query_parameters_are_refused_by_name(web: TestClient):
    response = web.post(f"{TOOL}?lookback_days=5", json=ARGUMENTS, headers=AUTH)
    body = _error_shape(response)
    assert "'lookback_days'" in body["error"] and "page_size" in body["hint"]
    taken = web.post(f"{CONTACT_TOOL}?lookback_days=5", json=ARGUMENTS, headers=AUTH)
    assert taken.status_code == 200, taken.text


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_bearer_scheme_is_case_insensitive(web: TestClient, scheme: str):
    response = web.post(TOOL, json=ARGUMENTS, headers={"Authorization": f"{scheme} {TOKEN}"})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("header", [f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer", TOKEN])
def test_anything_but_the_token_is_refused(web: TestClient, header: str):
    response = web.post(TOOL, json=ARGUMENTS, headers={"Authorization": header})
    assert response.status_code == 401
    _error_shape(response)
