"""serve's tokens against the real node: a token for alice reads, writes and erases
alice on every route of the OpenAPI document, and never reads, writes nor erases bob
(403, no request to Elasticsearch, bob's events and tombstones as they were). A real
`serve` process takes `tokens issue`'s tokens and an identity provider's (its JWKS on
127.0.0.1), refuses bad ones with 401, warns when it takes none, and logs no token
nor key."""

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import jwt
import pytest
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.core.key_file import read_key
from session_recall.http import create_app
from session_recall.indexer.tombstones import tombstone_index
from session_recall.node import wait_until
from session_recall.security.tokens import Action, audience_for, issue
from tests.support.identity_provider import AUDIENCE, ISSUER, IdentityProvider
from tests.support.ndjson import stored
from tests.support.recording import RecordingClient
from tests.support.serve import Served, serving
from tests.support.token_routes import BODY_USERS, MEMORIES, Operation, operations
from tests.support.tokens import issue_token

pytestmark = pytest.mark.integration

OPERATOR = "operator-token-7c9d"
KEY = "integration-token-key".ljust(32, "-")


def _token(alias: str, user: str, actions=tuple(Action), **options) -> str:
    return issue(
        KEY.encode(), audience=audience_for(alias), user=user, actions=actions, ttl_s=600,
        **options,
    )  # fmt: skip


def _tombstones(es: Elasticsearch, alias: str) -> int:
    index = tombstone_index(alias)
    if not es.indices.exists(index=index):
        return 0
    es.indices.refresh(index=index)
    return int(es.count(index=index)["count"])


@pytest.fixture
def web(settings: Settings, es: Elasticsearch) -> Iterator[tuple[TestClient, RecordingClient]]:
    keyed = settings.with_overrides(token_key=KEY)
    seam = RecordingClient(es)
    # No enrichment: its background searches would be calls no request made.
    app = create_app(keyed, client=seam, token=OPERATOR, enrich=False)  # type: ignore[arg-type]
    with TestClient(app) as web:
        yield web, seam


def _seed(web: TestClient, op: Operation, user: str) -> None:
    """`user`'s events, stored by the operator, in the session and inbox the requests
    name, and the memory the requests save (so that reading memories finds it)."""
    answer = op.request(user, body_users=(user, user)).send(web, OPERATOR)
    assert answer.status_code == 200, answer.text
    memory = Operation("post", MEMORIES).request(user).send(web, OPERATOR)
    assert memory.status_code == 201, memory.text


def test_alice_reaches_alice_and_never_bob_on_any_route(
    web: tuple[TestClient, RecordingClient], es: Elasticsearch, alias: str
):
    client, seam = web
    ops = operations(client.get("/openapi.json").json())
    [events] = [op for op in ops if (op.method, op.path) in BODY_USERS]
    _seed(client, events, "bob")
    _seed(client, events, "alice")
    bob_before, tombstones_before = stored(es, alias, user_id="bob"), _tombstones(es, alias)
    assert bob_before == 2
    alice = _token(alias, "alice")
    seam.calls.clear()
    for op in ops:
        request = op.request("bob")
        refused = [request, request.ndjson()] if isinstance(request.json, list) else [request]
        if isinstance(request.json, list):
            mixed = op.request("alice", body_users=("alice", "bob"))
            refused += [mixed, mixed.ndjson()]
        for each in refused:
            answer = each.send(client, alice)
            assert answer.status_code == 403, (op.id, answer.text)
    assert seam.calls == []  # not one request reached Elasticsearch
    assert stored(es, alias, user_id="bob") == bob_before
    assert stored(es, alias, user_id="alice") == 2  # nothing of the mixed bodies
    assert _tombstones(es, alias) == tombstones_before
    for op in ops:  # erasures come last: alice's reads find her events first
        answer = op.request("alice").send(client, _token(alias, "alice", [op.needs()]))
        assert answer.status_code == 200, (op.id, answer.text)
        if op.needs() is Action.READ:
            found = "weather" in answer.text or "s-tok" in answer.text  # a text, or a session
            assert found and "bob" not in answer.text, (op.id, answer.text)
    assert stored(es, alias, user_id="alice") == 0  # erased, by her own token
    assert stored(es, alias, user_id="bob") == bob_before


def test_the_mixed_body_stored_none_of_its_events(
    web: tuple[TestClient, RecordingClient], es: Elasticsearch, alias: str
):
    client, _seam = web
    ops = operations(client.get("/openapi.json").json())
    [events] = [op for op in ops if (op.method, op.path) in BODY_USERS]
    token = _token(alias, "alice", [Action.WRITE])
    for request in (events.request("alice", body_users=("alice", "bob")),) * 2:
        for each in (request, request.ndjson()):
            assert each.send(client, token).status_code == 403
    assert stored(es, alias) == 0
    assert events.request("alice").send(client, token).status_code == 200
    assert stored(es, alias, user_id="alice") == 1


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    provider = IdentityProvider()
    yield provider
    provider.stop()


@pytest.fixture(scope="module")
def served(
    es_url: str, module_alias: str, tmp_path_factory: pytest.TempPathFactory, idp: IdentityProvider
) -> Iterator[tuple[Served, str]]:
    """serve with the operator token, a key made by `tokens issue`, and the identity
    provider; logging everything it logs (debug)."""
    folder = tmp_path_factory.mktemp("serve-tokens")
    home = folder / "home"
    env = {
        "SESSION_RECALL_HOME": str(home),
        "SESSION_RECALL_INDEX": module_alias,
        "SESSION_RECALL_IDP_JWKS_URL": idp.jwks_url,
        "SESSION_RECALL_IDP_ISSUER": ISSUER,
        "SESSION_RECALL_IDP_AUDIENCE": AUDIENCE,
        "SESSION_RECALL_IDP_MAX_TTL": "7200",  # the provider's tokens: two hours at most
    }
    issued = issue_token(env, "--user", "alice", "--can", "read,write")
    with serving(
        es_url=es_url, alias=module_alias, folder=folder, token=OPERATOR, log_level="debug",
        env=env, stdout_too=True,
    ) as served:  # fmt: skip
        yield served, issued


def _post(served: Served, path: str, token: str) -> httpx.Response:
    return httpx.post(
        f"{served.url}{path}",
        json={"innerThought": "recap", "query": "weather"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def test_serve_takes_issued_and_provider_tokens_for_their_users_alone(
    served: tuple[Served, str], idp: IdentityProvider
):
    process, alice = served
    tool = "/v1/users/{}/tools/cross_session_search"
    assert _post(process, tool.format("alice"), alice).status_code == 200
    assert _post(process, tool.format("bob"), alice).status_code == 403
    from_idp = idp.sign(idp.claims(sub="u-carol"))
    assert _post(process, tool.format("u-carol"), from_idp).status_code == 200
    assert _post(process, tool.format("alice"), from_idp).status_code == 403
    assert _post(process, tool.format("bob"), OPERATOR).status_code == 200
    wrong = idp.sign(idp.claims(sub="u-carol", aud="another-api"))
    answer = _post(process, tool.format("u-carol"), wrong)
    assert answer.status_code == 401
    assert "audience" in answer.json()["error"]


def test_a_token_whose_expiry_is_no_number_or_too_far_is_refused(
    served: tuple[Served, str], idp: IdentityProvider, module_alias: str
):
    """PyJWT reads an `exp` of digits in a string as a number, and checks no lifetime:
    a token signed with serve's key, or the provider's, lived as long as it said."""
    process, _alice = served
    key = read_key(process.log.parent / "home" / "token.key", lost="")
    now = int(time.time())
    own = {
        "iss": "session-recall", "aud": audience_for(module_alias), "sub": "alice",
        "scope": "read", "iat": now,
    }  # fmt: skip
    century = now + 100 * 365 * 86400
    tool = "/v1/users/{}/tools/cross_session_search"
    cases = {
        "own, exp a string": (jwt.encode({**own, "exp": str(now + 600)}, key), "alice", "'exp'"),
        "own, 100 years": (jwt.encode({**own, "exp": century}, key), "alice", "30 days"),
        "own, iat a string": (
            jwt.encode({**own, "iat": str(now), "exp": now + 600}, key),
            "alice",
            "'iat'",
        ),
        "provider, exp a string": (idp.sign(idp.claims(exp=str(now + 600))), "u-alice", "'exp'"),
        "provider, 100 years": (idp.sign(idp.claims(exp=century)), "u-alice", "2 hours"),
        "provider, 3 hours": (idp.sign(idp.claims(exp=now + 3 * 3600)), "u-alice", "2 hours"),
    }
    for case, (token, user, said) in cases.items():
        answer = _post(process, tool.format(user), token)
        assert answer.status_code == 401, (case, answer.text)
        assert said in answer.json()["error"], (case, answer.text)
    # Within the bounds, the same tokens are taken.
    assert (
        _post(process, tool.format("alice"), jwt.encode({**own, "exp": now + 600}, key)).status_code
        == 200
    )
    in_time = idp.sign(idp.claims(exp=now + 3600))
    assert _post(process, tool.format("u-alice"), in_time).status_code == 200


def test_no_token_nor_key_appears_in_serves_log(
    served: tuple[Served, str], idp: IdentityProvider, tmp_path: Path
):
    process, alice = served
    home = Path(process.log.parent / "home")
    key_text = (home / "token.key").read_text().strip()
    from_idp = idp.sign(idp.claims())
    bad = [alice[:-5] + "AAAAA", idp.sign(idp.claims(exp=1)), "Zm9v.YmFy.YmF6"]
    for token in [alice, from_idp, OPERATOR, *bad]:
        for user in ("alice", "u-alice", "bob"):
            _post(process, f"/v1/users/{user}/tools/memory_search", token)
            httpx.get(
                f"{process.url}/v1/users/{user}/sessions?page_size=1",
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            )
    # The last request's access line (by route template: never the ids of the path).
    sessions = "GET /v1/users/{user}/sessions "
    assert wait_until(lambda: process.log_text().count(sessions) >= 18, timeout=30)
    log = process.log_text()
    secrets = [OPERATOR, key_text, *(t for t in [alice, from_idp, *bad])]
    # Each part of a token too: a signature alone forges nothing, but says it was logged.
    secrets += [part for t in [alice, from_idp] for part in t.split(".")]
    assert [s for s in secrets if s in log] == []
    assert "Warning: serving without any token" not in log


def test_serve_warns_at_start_when_it_takes_no_token(
    es_url: str, module_alias: str, tmp_path: Path
):
    with serving(es_url=es_url, alias=module_alias, folder=tmp_path) as served:
        # Said before the server starts: in the log once it answers.
        assert (
            "Warning: serving without any token: every local process can read, write and "
            "erase every user's events." in served.log_text()
        )


@pytest.mark.parametrize("weak", ["a", "operator", "aaaaaaaaaaaaaaaaaaaa", "abababababababababab"])
def test_serve_refuses_a_weak_operator_token(
    es_url: str, module_alias: str, tmp_path: Path, weak: str
):
    done = _serve(es_url, module_alias, tmp_path, env={"SESSION_RECALL_TOKEN": weak})
    assert done.returncode == 3, done.stderr
    assert "The operator token (SESSION_RECALL_TOKEN) is too weak" in done.stderr
    assert len(weak) < 16 or weak not in done.stderr  # never echoed
    assert "Traceback" not in done.stderr


def test_serve_off_loopback_takes_no_token_unless_told_so(
    es_url: str, module_alias: str, tmp_path: Path
):
    refused = _serve(es_url, module_alias, tmp_path, "--host", "0.0.0.0")
    assert refused.returncode == 3, refused.stderr
    assert "serve would listen on 0.0.0.0 without any token" in refused.stderr
    assert "--allow-no-token" in refused.stderr
    told = {"SESSION_RECALL_HOST": "0.0.0.0", "SESSION_RECALL_ALLOW_NO_TOKEN": "1"}
    with serving(es_url=es_url, alias=module_alias, folder=tmp_path, env=told) as served:
        assert httpx.get(f"{served.url}/healthz", timeout=10).status_code == 200
        assert "anyone who can reach 0.0.0.0 can read, write and erase" in served.log_text()


def _serve(
    es_url: str, alias: str, folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A serve that should refuse to start: it would answer on a free port otherwise."""
    import os

    from tests.support.network import free_port

    settings = {
        "ELASTICSEARCH_URL": es_url,
        "SESSION_RECALL_INDEX": alias,
        "SESSION_RECALL_HOME": str(folder / "home"),
        **(env or {}),
    }
    return subprocess.run(
        ["session-recall", "serve", "--port", str(free_port()), *args],
        env={**os.environ, **settings},
        capture_output=True,
        text=True,
        timeout=60,
    )
