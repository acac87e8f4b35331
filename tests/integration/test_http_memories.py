"""Kept memories over HTTP: `/v1/users/{user}/memories` saves, searches, lists and
retires one user's memories, with the token rules of the other user routes."""

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.security.tokens import Action, audience_for, issue

pytestmark = pytest.mark.integration

OPERATOR = "operator-token-memories"
KEY = "memories-token-key".ljust(32, "-")
AUTH = {"Authorization": f"Bearer {OPERATOR}"}


def _token(alias: str, user: str, *actions: Action) -> dict[str, str]:
    token = issue(
        KEY.encode(),
        audience=audience_for(alias),
        user=user,
        actions=actions or tuple(Action),
        ttl_s=600,
    )
    return {"Authorization": f"Bearer {token}"}


def _event(user: str, n: int, day: int, text: str) -> dict[str, str]:
    return {
        "event_id": f"{user}-{n}",
        "user_id": user,
        "session_id": "s",
        "timestamp": f"2026-07-{day:02d}T10:00:00Z",
        "type": "user_message",
        "text": text,
    }


@pytest.fixture
def web(settings: Settings) -> Iterator[TestClient]:
    app = create_app(settings.with_overrides(token_key=KEY), token=OPERATOR, enrich=False)
    with TestClient(app) as client:
        events = [
            _event("alice", 1, 1, "We decided to use PostgreSQL for billing"),
            _event("alice", 2, 8, "Actually, let's go with MySQL for billing"),
            _event("bob", 1, 2, "We decided to use Oracle for billing"),
        ]
        stored = client.post("/v1/events?refresh=wait_for", json=events, headers=AUTH)
        assert stored.status_code == 200, stored.text
        yield client


def test_save_search_list_and_retire_over_http(web: TestClient, alias: str) -> None:
    alice = _token(alias, "alice")
    old = web.post(
        "/v1/users/alice/memories",
        headers=alice,
        json={"statement": "Billing uses PostgreSQL.", "kind": "decision", "sources": ["alice-1"]},
    )
    assert old.status_code == 201, old.text
    old_id = old.json()["memory"]["memoryId"]
    new = web.post(
        "/v1/users/alice/memories",
        headers=alice,
        json={
            "statement": "Billing uses MySQL.",
            "kind": "decision",
            "sources": ["alice-2"],
            "supersedes": old_id,
        },
    )
    assert new.status_code == 201 and new.json()["superseded"] == [old_id], new.text
    again = web.post(
        "/v1/users/alice/memories",
        headers=alice,
        json={"statement": "Billing uses MySQL.", "kind": "decision", "sources": ["alice-2"]},
    )
    assert again.status_code == 200 and again.json()["created"] is False

    found = web.get(
        "/v1/users/alice/memories", headers=alice, params={"q": "which database for billing"}
    )
    assert found.status_code == 200, found.text
    assert [m["statement"] for m in found.json()["memories"]] == ["Billing uses MySQL."]
    listed = web.get(
        "/v1/users/alice/memories?include_superseded=true&kind=decision", headers=alice
    ).json()["memories"]
    assert {m["memoryId"]: m["supersededBy"] for m in listed} == {
        new.json()["memory"]["memoryId"]: None,
        old_id: new.json()["memory"]["memoryId"],
    }

    retired = web.post(
        f"/v1/users/alice/memories/{new.json()['memory']['memoryId']}/retire",
        headers=alice,
        json={"reason": "billing moved"},
    )
    assert retired.status_code == 200 and retired.json()["validTo"], retired.text
    assert web.get("/v1/users/alice/memories", headers=alice).json()["memories"] == []


def test_sources_and_memories_of_another_user_are_refused(web: TestClient, alias: str) -> None:
    bobs = web.post(
        "/v1/users/bob/memories",
        headers=AUTH,
        json={"statement": "Billing uses Oracle.", "kind": "decision", "sources": ["bob-1"]},
    )
    assert bobs.status_code == 201, bobs.text
    bob_id = bobs.json()["memory"]["memoryId"]
    alice = _token(alias, "alice")
    theft = web.post(
        "/v1/users/alice/memories",
        headers=alice,
        json={"statement": "Billing uses Oracle.", "kind": "decision", "sources": ["bob-1"]},
    )
    assert theft.status_code == 422 and "not stored events of this user" in theft.text
    retire = web.post(
        f"/v1/users/alice/memories/{bob_id}/retire", headers=alice, json={"reason": "mine"}
    )
    assert retire.status_code == 422, retire.text
    for method, path, body in (
        ("GET", "/v1/users/bob/memories?q=billing", None),
        ("GET", "/v1/users/bob/memories", None),
        (
            "POST",
            "/v1/users/bob/memories",
            {"statement": "x", "kind": "fact", "sources": ["bob-1"]},
        ),
        ("POST", f"/v1/users/bob/memories/{bob_id}/retire", {"reason": "mine"}),
    ):
        answer = web.request(method, path, headers=alice, json=body)
        assert answer.status_code == 403, (method, path, answer.text)
    reader = _token(alias, "alice", Action.READ)
    assert (
        web.post(
            "/v1/users/alice/memories",
            headers=reader,
            json={"statement": "x", "kind": "fact", "sources": ["alice-1"]},
        ).status_code
        == 403
    )
    for query in ("?q=Oracle+billing&include_superseded=true", "?include_superseded=true"):
        answer = web.get(f"/v1/users/alice/memories{query}", headers=AUTH)
        assert answer.status_code == 200 and "Oracle" not in answer.text, answer.text
    assert "Oracle" in web.get("/v1/users/bob/memories", headers=AUTH).text
    bad = web.get("/v1/users/alice/memories?kind=opinion", headers=alice)
    assert bad.status_code == 422 and "opinion" in bad.text


def test_recall_memories_as_a_tool_answers_the_current_memory_for_its_user_alone(
    web: TestClient, alias: str
) -> None:
    """The tool endpoint (`/tools/recall_memories`) gives a model's answer, as the other
    tools' endpoints do: for agents in other languages (the Spring AI module)."""
    for user, source, statement in (
        ("alice", "alice-2", "Billing uses MySQL."),
        ("bob", "bob-1", "Billing uses Oracle."),
    ):
        saved = web.post(
            f"/v1/users/{user}/memories",
            headers=AUTH,
            json={"statement": statement, "kind": "decision", "sources": [source]},
        )
        assert saved.status_code == 201, saved.text
    tool = "/v1/users/alice/tools/recall_memories"
    answer = web.post(
        tool, headers=AUTH, json={"innerThought": "t", "query": "which database for billing"}
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    assert "Billing uses MySQL." in answer.text and "Oracle" not in answer.text
    typed = web.post(
        f"{tool}?format=page",
        headers=AUTH,
        json={"innerThought": "t", "query": "which database for billing", "turns": 2},
    )
    assert typed.status_code == 200, typed.text
    result = typed.json()
    assert [m["statement"] for m in result["memories"]] == ["Billing uses MySQL."]
    assert "Oracle" not in typed.text and result["turns"]["hits"], result
    # A model's mistake is the line it reads; another user's token gets nothing of alice.
    wrong = web.post(
        tool, headers=AUTH, json={"innerThought": "t", "query": "billing", "kinds": ["mood"]}
    )
    assert wrong.status_code == 422 and wrong.text.startswith("Error: "), wrong.text
    refused = web.post(
        tool, headers=_token(alias, "bob"), json={"innerThought": "t", "query": "billing"}
    )
    assert refused.status_code == 403 and "MySQL" not in refused.text
