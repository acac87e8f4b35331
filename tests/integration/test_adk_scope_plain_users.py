"""ADK's `(app, user)` and the plain users: no plain user id reaches an ADK app's
memory, nor is reached from it, on the adapter and over serve's tokens. The plain user
`tea-shop/ana` (an id with a `/`, as any producer may send) is not ana of app tea-shop.
"""

from collections.abc import Iterator

import jwt
import pytest
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.integrations.adk import SessionRecallMemoryService, memory_user
from session_recall.recall.errors import InvalidScope
from session_recall.security.tokens import Action, audience_for, issue
from tests.support.ndjson import event

pytestmark = pytest.mark.integration

OPERATOR = "operator-token-adk-scope"
KEY = "adk-scope-token-key".ljust(32, "-")
PLAIN = "tea-shop/ana"  # a plain user: no app


@pytest.fixture
def web(settings: Settings) -> Iterator[TestClient]:
    """serve, with the plain user's words and ADK's ana's, each stored by the operator."""
    keyed = settings.with_overrides(token_key=KEY)
    with TestClient(create_app(keyed, token=OPERATOR, enrich=False)) as client:
        events = [
            event(0, user=PLAIN, session="plain", text="the plain user's jasmine note"),
            event(1, user=memory_user("tea-shop", "ana"), session="adk", text="oolong note"),
        ]
        written = client.post(
            "/v1/events?refresh=wait_for",
            json=events,
            headers={"Authorization": f"Bearer {OPERATOR}"},
        )
        assert written.status_code == 200, written.text
        yield client


def _sessions(web: TestClient, token: str, user_path: str) -> list[str]:
    answer = web.get(
        f"/v1/users/{user_path}/sessions", headers={"Authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 200, answer.text
    return [s["session_id"] for s in answer.json()["items"]]


async def test_the_adk_adapter_never_finds_a_plain_users_events(
    web: TestClient, settings: Settings
) -> None:
    service = SessionRecallMemoryService(
        settings=settings.model_copy(update={"embedder": "none", "enrich": False}),
        mode="keyword",
    )
    plain = await service.search_memory(app_name="tea-shop", user_id="ana", query="jasmine")
    assert plain.memories == []  # the plain user's words
    own = await service.search_memory(app_name="tea-shop", user_id="ana", query="oolong")
    assert [m.content.parts[0].text for m in own.memories] == ["oolong note"]


def test_a_token_for_the_plain_user_reads_its_own_events_alone(
    web: TestClient, settings: Settings
) -> None:
    aud = audience_for(settings.index)
    plain = issue(KEY.encode(), audience=aud, user=PLAIN, actions=[Action.READ], ttl_s=600)
    assert _sessions(web, plain, "tea-shop%2Fana") == ["plain"]
    adk = issue(
        KEY.encode(), audience=aud, user="ana", app="tea-shop", actions=[Action.READ], ttl_s=600
    )
    assert _sessions(web, adk, "adk:tea-shop%2Fana") == ["adk"]
    # The ADK scope's own id, asked for as a plain user: refused at issue, and a token
    # that names it anyway (signed with the key) is refused by serve.
    with pytest.raises(InvalidScope, match="ADK app's user"):
        issue(KEY.encode(), audience=aud, user="adk:tea-shop/ana", actions=[Action.READ], ttl_s=9)
    forged = jwt.encode(
        {**jwt.decode(plain, options={"verify_signature": False}), "sub": "adk:tea-shop/ana"},
        KEY,
        algorithm="HS256",
    )
    answer = web.get(
        "/v1/users/adk:tea-shop%2Fana/sessions", headers={"Authorization": f"Bearer {forged}"}
    )
    assert answer.status_code == 401, answer.text
