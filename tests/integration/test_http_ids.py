"""Ids that hold `/` or `%` reach their own scope over HTTP: each path segment is
decoded on its own, so ADK's memory (`adk:tea-shop/ana`) is read and erased through
`serve`, and no encoded slash turns one scope into another (`bob%2Fsessions%2Fs1` is
the user of that id, never bob's session s1)."""

from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.integrations.adk import memory_user
from tests.support.ndjson import event, stored
from tests.support.serve import serving

pytestmark = pytest.mark.integration

ANA = memory_user("tea-shop", "ana")  # adk:tea-shop/ana
SLASHED_APP = memory_user("a/b", "c")  # adk:a%2Fb/c: a `%` in the id itself
USERS = [ANA, SLASHED_APP, "tea-shop", "bob", "bob/sessions/s1", "a/b/c", "a%2Fb%2Fc"]


def _path(user: str) -> str:
    return "/v1/users/" + quote(user, safe="")


@pytest.fixture
def web(settings: Settings) -> TestClient:
    with TestClient(create_app(settings, enrich=False)) as client:
        events = [
            event(i, user=user, session="s/1" if user == ANA else "s1")
            for i, user in enumerate(USERS)
        ]
        written = client.post("/v1/events?refresh=wait_for", json=events)
        assert written.status_code == 200, written.text
        yield client


def _count(es: Elasticsearch, alias: str) -> dict[str, int]:
    return {user: stored(es, alias, user_id=user) for user in USERS}


def test_adk_memory_is_read_and_erased_over_http(es: Elasticsearch, alias: str, web: TestClient):
    assert ANA == "adk:tea-shop/ana"
    sessions = web.get(f"{_path(ANA)}/sessions")
    assert sessions.status_code == 200, sessions.text
    assert [s["session_id"] for s in sessions.json()["items"]] == ["s/1"]
    events = web.get(f"{_path(ANA)}/sessions/s%2F1/events")
    assert events.status_code == 200, events.text
    assert [e["event_id"] for e in events.json()["items"]] == ["e-0"]
    recalled = web.post(
        f"{_path(ANA)}/tools/cross_session_search?format=page",
        json={"innerThought": "t", "query": "weather"},
    )
    assert recalled.status_code == 200, recalled.text
    assert [e["event_id"] for e in recalled.json()["items"]] == ["e-0"]

    erased = web.delete("/v1/users/adk:tea-shop%2Fana")  # as docs/frameworks.md writes it
    assert erased.status_code == 200, erased.text
    assert erased.json()["removed"] == 1 and erased.json()["scope"]["user_id"] == ANA
    assert _count(es, alias) == {user: user != ANA for user in USERS}


@pytest.mark.parametrize("user", [SLASHED_APP, "bob/sessions/s1", "a/b/c", "a%2Fb%2Fc"])
def test_each_encoded_id_erases_its_own_user_and_nobody_else(
    es: Elasticsearch, alias: str, web: TestClient, user: str
):
    erased = web.delete(_path(user))
    assert erased.status_code == 200, erased.text
    assert erased.json()["scope"] == {"kind": "user", "user_id": user}
    assert _count(es, alias) == {other: other != user for other in USERS}


def test_a_segment_that_is_not_utf8_writes_no_tombstone(
    es: Elasticsearch, alias: str, web: TestClient
):
    for path in ("/v1/users/%FF", "/v1/users/%FE", "/v1/users/bob/sessions/%FF"):
        refused = web.delete(path)
        assert refused.status_code == 400, refused.text
        assert "not UTF-8" in refused.json()["error"]
    es.indices.refresh(index=f"{alias}-tombstones")  # made by setup
    assert es.count(index=f"{alias}-tombstones")["count"] == 0
    assert _count(es, alias) == dict.fromkeys(USERS, 1)


def test_the_sidecar_process_routes_encoded_ids_the_same(
    es: Elasticsearch, es_url: str, alias: str, web: TestClient, tmp_path: Path
):
    """uvicorn hands the app the raw path as the client sent it: the same routing."""
    with serving(es_url=es_url, alias=alias, folder=tmp_path) as served:
        erased = httpx.delete(f"{served.url}/v1/users/adk:tea-shop%2Fana", timeout=30)
        refused = httpx.delete(f"{served.url}/v1/users/%FF", timeout=30)
    assert erased.status_code == 200, erased.text
    assert erased.json()["scope"]["user_id"] == ANA
    assert refused.status_code == 400 and "not UTF-8" in refused.json()["error"]
    assert _count(es, alias) == {user: user != ANA for user in USERS}
