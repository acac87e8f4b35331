"""serve's tokens, before any request to Elasticsearch: every route of the OpenAPI
document refuses a token for another user (403) or one that is not valid (401), and
the app's client, which records every call and reaches no node, is never called.
(tests/integration/test_serve_tokens.py: the same against a real node, with data.)"""

import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import RouteGroup, Services, create_app, default_groups
from session_recall.http.limits import ServeLimits
from session_recall.security.tokens import Action, audience_for, issue
from tests.support.recording import RecordingClient
from tests.support.token_routes import BODY_USERS, OPEN, Operation, operations

OPERATOR = "operator-token-5e1"
KEY = "unit-token-key-".ljust(32, "x")
ALIAS = "token-alias"
ALL = tuple(Action)


def _token(user: str, actions=ALL, *, ttl_s: float = 600, now: float | None = None, **options):
    return issue(
        KEY.encode(), audience=audience_for(ALIAS), user=user, actions=actions, ttl_s=ttl_s,
        now=now, **options,
    )  # fmt: skip


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        ELASTICSEARCH_URL="http://127.0.0.1:9",
        SESSION_RECALL_INDEX=ALIAS,
        SESSION_RECALL_HOME=tmp_path,
        SESSION_RECALL_TOKEN_KEY=KEY,
    )


@pytest.fixture
def client() -> RecordingClient:
    return RecordingClient()


# A request let through meets no node: answered 503 within these, not the defaults.
QUICK = ServeLimits(write_deadline=0.3, read_deadline=0.3)


def _app(settings: Settings, client: RecordingClient, **options) -> Starlette:
    return create_app(
        settings,
        client=client,  # type: ignore[arg-type]
        token=OPERATOR,
        enrich=False,
        limits=QUICK,
        **options,
    )


@pytest.fixture
def web(settings: Settings, client: RecordingClient) -> Iterator[TestClient]:
    with TestClient(_app(settings, client)) as web:
        yield web


@pytest.fixture
def ops(web: TestClient) -> list[Operation]:
    return operations(web.get("/openapi.json").json())


def test_every_route_of_the_app_is_in_the_document_and_says_it_may_answer_403(
    web: TestClient, ops: list[Operation]
):
    document = web.get("/openapi.json").json()
    served = {
        (method.lower(), route.path)
        for route in web.app.routes  # type: ignore[attr-defined]
        for method in (route.methods or set()) - {"HEAD"}
    }
    listed = {(op.method, op.path) for op in ops}
    assert served - listed == {("get", path) for path in OPEN}
    for op in ops:
        assert "403" in document["paths"][op.path][op.method]["responses"], op.id


def test_a_token_for_alice_never_reaches_bob_on_any_route(
    web: TestClient, client: RecordingClient, ops: list[Operation]
):
    alice = _token("alice")
    for op in ops:
        request = op.request("bob")
        variants = [request, request.ndjson()] if isinstance(request.json, list) else [request]
        if op.method == "get":
            variants.append(type(request)("head", request.url))
        for variant in variants:
            answer = variant.send(web, alice)
            assert answer.status_code == 403, (op.id, variant.method, answer.text)
        assert client.calls == [], op.id


@pytest.mark.parametrize("ndjson", [False, True], ids=["json", "ndjson"])
@pytest.mark.parametrize(
    "users", [("bob",), ("alice", "bob"), ("bob", "alice"), ("alice", "alice", "bob")]
)
def test_a_body_naming_another_user_is_refused_whole(
    web: TestClient, client: RecordingClient, ops: list[Operation], users, ndjson: bool
):
    [events] = [op for op in ops if (op.method, op.path) in BODY_USERS]
    request = events.request("alice", body_users=users)
    answer = (request.ndjson() if ndjson else request).send(web, _token("alice"))
    assert answer.status_code == 403, answer.text
    assert "nothing was stored" in answer.json()["error"]
    assert client.calls == []


def test_each_route_takes_a_token_that_allows_its_action_and_no_other(
    web: TestClient, client: RecordingClient, ops: list[Operation]
):
    for op in ops:
        for action in Action:
            answer = op.request("alice").send(web, _token("alice", [action]))
            refused = answer.status_code == 403
            assert refused == (action is not op.needs()), (op.id, action, answer.text)
            if refused:
                assert f"does not allow {op.needs()}" in answer.json()["error"]
    # Allowed, each request went on to Elasticsearch, which here does not answer.
    assert client.calls


def test_the_operator_token_still_reaches_every_user(
    web: TestClient, client: RecordingClient, ops: list[Operation]
):
    for op in ops:
        answer = op.request("bob").send(web, OPERATOR)
        assert answer.status_code not in (401, 403), (op.id, answer.text)


def _header_none(token: str) -> str:
    import base64

    _, payload, _ = token.split(".")
    return base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode() + (
        f".{payload}."
    )


BAD = {
    "expired": lambda: _token("alice", ttl_s=60, now=time.time() - 3600),
    "tampered": lambda: _token("alice")[:-6] + "AAAAAA",
    "wrong-audience": lambda: issue(KEY.encode(), audience=audience_for("other"), user="alice",
                                    actions=ALL, ttl_s=60),
    "wrong-issuer": lambda: jwt.encode({"iss": "mallory", "aud": audience_for(ALIAS),
                                        "sub": "alice", "scope": "read write erase",
                                        "exp": int(time.time()) + 60}, KEY, algorithm="HS256"),
    "alg-none": lambda: _header_none(_token("alice")),
    "other-key": lambda: issue(b"y" * 32, audience=audience_for(ALIAS), user="alice",
                               actions=ALL, ttl_s=60),
    "garbage": lambda: "Zm9v.YmFy.YmF6",
    "operator-token-prefix": lambda: OPERATOR[:-1],
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_token_that_is_not_valid_is_refused_on_every_route(
    web: TestClient, client: RecordingClient, ops: list[Operation], case: str
):
    token = BAD[case]()
    for op in ops:
        answer = op.request("alice").send(web, token)
        assert answer.status_code == 401, (op.id, answer.text)
        assert answer.headers["www-authenticate"] == "Bearer"
        assert token not in answer.text
    assert client.calls == []


def test_a_route_that_says_nothing_of_tokens_takes_the_operator_token_alone(
    settings: Settings, client: RecordingClient
):
    def unlisted(_services: Services) -> RouteGroup:
        async def hello(_request: Request) -> PlainTextResponse:
            return PlainTextResponse("hello")

        mounted = Mount("/v1/users/{user}/mounted", routes=[Route("/", hello)])
        return RouteGroup(routes=[Route("/v1/users/{user}/hello", hello), mounted])

    app = _app(settings, client, groups=[*default_groups(), unlisted])
    with TestClient(app) as web:
        for path in ("/v1/users/alice/hello", "/v1/users/alice/mounted/"):
            refused = web.get(path, headers={"Authorization": f"Bearer {_token('alice')}"})
            assert refused.status_code == 403, path
            assert "operator token alone" in refused.json()["error"]
            answer = web.get(path, headers={"Authorization": f"Bearer {OPERATOR}"})
            assert answer.text == "hello", path


def test_a_token_for_an_adk_app_reaches_that_apps_user_alone(
    web: TestClient, client: RecordingClient, ops: list[Operation]
):
    """The ADK memory of ana in tea-shop is stored as user `adk:tea-shop/ana`: the body of
    POST /v1/events names it as it is (a path, percent-encoded: the test below)."""
    token = _token("ana", app="tea-shop")
    [events] = [op for op in ops if (op.method, op.path) in BODY_USERS]
    for user in ("ana", "tea-shop/ana", "adk:other-shop/ana", "adk:tea-shop%2Fana"):
        answer = events.request(user).send(web, token)
        assert answer.status_code == 403, (user, answer.text)
    assert client.calls == []
    allowed = events.request("adk:tea-shop/ana").send(web, token)
    assert allowed.status_code not in (401, 403), allowed.text


def test_a_token_for_an_adk_app_reaches_its_user_in_every_path(
    web: TestClient, client: RecordingClient, ops: list[Operation]
):
    """A path names `adk:tea-shop/ana` as one segment, `adk:tea-shop%2Fana`: the token check
    reads it decoded, as the route does, and lets it through; another user of the app,
    or the same id split into two segments, is refused before any request."""
    token = _token("ana", app="tea-shop")
    in_path = [op for op in ops if op.needs() is not Action.WRITE]
    assert len(in_path) >= 8
    for op in in_path:
        for other in ("adk:tea-shop%2Fbob", "adk:tea-shop%252Fana", "tea-shop%2Fana", "ana"):
            refused = op.request(other).send(web, token)
            assert refused.status_code == 403, (op.id, other, refused.text)
    assert client.calls == []
    for op in in_path:
        allowed = op.request("adk:tea-shop%2Fana").send(web, token)
        assert allowed.status_code not in (400, 401, 403, 404), (op.id, allowed.text)
