"""serve's tokens against the real node: a token for alice reads, writes and erases
alice on every route of the OpenAPI document, and never reads, writes nor erases bob
(403, no request to Elasticsearch, bob's events and tombstones as they were). A real
`serve` process takes `tokens issue`'s tokens and an identity provider's (its JWKS on
127.0.0.1), refuses bad ones with 401, warns when it takes none, and logs no token
nor key."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.indexer.tombstones import tombstone_index
from session_recall.node import wait_until
from session_recall.security.tokens import Action, audience_for, issue
from tests.support.identity_provider import AUDIENCE, ISSUER, IdentityProvider
from tests.support.ndjson import stored
from tests.support.recording import RecordingClient
from tests.support.serve import Served, serving
from tests.support.token_routes import BODY_USERS, MEMORIES, Operation, operations

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
    }
    issued = _issue(env, "--user", "alice", "--can", "read,write")
    with serving(
        es_url=es_url, alias=module_alias, folder=folder, token=OPERATOR, log_level="debug",
        env=env, stdout_too=True,
    ) as served:  # fmt: skip
        yield served, issued


def _issue(env: dict[str, str], *args: str) -> str:
    import os

    done = subprocess.run(
        ["session-recall", "tokens", "issue", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


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
    assert wait_until(lambda: "/v1/users/bob/sessions" in process.log_text(), timeout=30)
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
