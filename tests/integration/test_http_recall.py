"""The recall endpoints end to end: a real `session-recall serve` process, events posted
to it, tool calls answered from the real node, and the bearer token enforced."""

import json
from collections.abc import Iterator

import httpx
import pytest
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.embeddings import MODELS_FIELD
from session_recall.node import wait_until
from tests.support.samples import BOTH, DECIDED, GO_WITH, SAMPLE, THOUGHT
from tests.support.serve import serving

pytestmark = pytest.mark.integration

TOKEN = "recall-endpoint-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ALICE = "/v1/users/alice/tools/cross_session_search"


@pytest.fixture(scope="module")
def server(es_url: str, module_alias: str, tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("serve")
    with serving(es_url=es_url, alias=module_alias, token=TOKEN, folder=folder) as served:
        stored = httpx.post(
            f"{served.url}/v1/events",
            content=SAMPLE.read_bytes(),
            headers={**AUTH, "Content-Type": "application/x-ndjson"},
            timeout=30,
        )
        assert stored.status_code == 200, stored.text
        es = Elasticsearch(es_url)
        # memory_search's vectors come from serve's background enrichment: wait for it,
        # however loaded the machine is.
        unembedded = {"bool": {"must_not": {"exists": {"field": MODELS_FIELD}}}}

        def embedded() -> bool:
            es.indices.refresh(index=module_alias)
            return es.count(index=module_alias, query=unembedded)["count"] == 0

        assert wait_until(embedded, timeout=120), "serve did not enrich the sample"
        yield served.url


def test_without_the_token_the_tools_answer_401(server: str):
    response = httpx.post(f"{server}{ALICE}", json={"innerThought": THOUGHT, "query": "x"})
    assert response.status_code == 401
    assert THOUGHT not in response.text


def test_the_tool_output_comes_back_as_a_model_reads_it(server: str):
    body = {"innerThought": THOUGHT, "query": "we decided, let's go with"}
    response = httpx.post(f"{server}{ALICE}", json=body, headers=AUTH)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == f"[{DECIDED},{GO_WITH},{BOTH}]"


def test_the_typed_page_pages_with_its_cursor(server: str):
    body = {"innerThought": THOUGHT, "query": "we decided, let's go with"}
    first = httpx.post(f"{server}{ALICE}?format=page&page_size=2", json=body, headers=AUTH)
    assert first.status_code == 200, first.text
    page = first.json()
    assert [item["session_id"] for item in page["items"]] == ["s-trip", "s-stack"]
    rest = httpx.post(
        f"{server}{ALICE}",
        params={"format": "page", "page_size": 2, "cursor": page["next_cursor"]},
        json=body,
        headers=AUTH,
    )
    assert rest.status_code == 200, rest.text
    assert [item["session_id"] for item in rest.json()["items"]] == ["s-notes"]
    assert rest.json()["next_cursor"] is None


def test_conversation_search_is_bound_to_the_session_in_the_path(server: str):
    path = "/v1/users/alice/sessions/s-stack/tools/conversation_search"
    body = {"innerThought": THOUGHT, "query": "decided"}
    assert httpx.post(f"{server}{path}", json=body, headers=AUTH).text == "No results found."
    body["query"] = "Postgres"
    text = httpx.post(f"{server}{path}", json=body, headers=AUTH).text
    assert '"text":"For the new service, Postgres or Elasticsearch?"' in text
    assert "sessionId" not in text


def _days_ago(days: int) -> str:
    return Instant(Instant.now().nanos - days * 86_400 * 10**9).isoformat()


@pytest.fixture(scope="module")
def conversations(server: str, es_url: str, module_alias: str) -> None:
    """Contact c-http's conversations, dated relative to today."""
    rows = [
        ("acme", "old-current", 200, "refund for the blender"),
        ("acme", "last-week", 7, "refund status please"),
        ("acme", "long-ago", 120, "refund question from spring"),
        ("globex", "other-tenant", 3, "refund for a globex order"),
    ]
    events = [
        {"userId": user, "sessionId": session, "timestamp": _days_ago(days), "type": "user",
         "text": text, "contactId": "c-http", "inboxId": "web"}
        for user, session, days, text in rows
    ]  # fmt: skip
    stored = httpx.post(f"{server}/v1/events", json=events, headers=AUTH, timeout=30)
    assert stored.status_code == 200, stored.text
    Elasticsearch(es_url).indices.refresh(index=module_alias)


CONTACT = "/contacts/c-http/inboxes/web/tools/cross_conversation_search"


@pytest.mark.parametrize(
    ("prefix", "params", "expected"),
    [
        # Disabled (the default): the current conversation only, however old.
        ("/v1/users/acme", {}, ["old-current"]),
        # Enabled: recent conversations too, within the 90-day lookback.
        ("/v1/users/acme", {"enabled": "true"}, ["old-current", "last-week"]),
        ("/v1/users/acme", {"enabled": "true", "lookback_days": 150},
         ["old-current", "last-week", "long-ago"]),
        # The same contact and inbox ids under another user: another customer.
        ("/v1/users/globex", {"enabled": "true"}, ["other-tenant"]),
    ],
)  # fmt: skip
def test_cross_conversation_search_takes_its_scope_from_path_and_query(
    server: str, conversations: None, prefix: str, params: dict, expected: list[str]
):
    response = httpx.post(
        f"{server}{prefix}{CONTACT}",
        params={"current_session": "old-current", **params},
        json={"innerThought": THOUGHT, "query": "refund"},
        headers=AUTH,
    )
    assert response.status_code == 200, response.text
    sessions = ["old-current", "last-week", "long-ago", "other-tenant"]
    assert [s for s in sessions if f'"sessionId":"{s}"' in response.text] == expected


def test_there_is_no_cross_conversation_search_without_a_user(server: str, conversations: None):
    response = httpx.post(
        f"{server}/v1{CONTACT}",
        params={"current_session": "old-current", "enabled": "true"},
        json={"innerThought": THOUGHT, "query": "refund"},
        headers=AUTH,
    )
    assert response.status_code == 404
    assert "refund" not in response.text


def test_the_openapi_document_lists_the_tool_endpoints(server: str):
    document = httpx.get(f"{server}/openapi.json").json()
    assert ALICE.replace("alice", "{user}") in document["paths"]
    operation = document["paths"][ALICE.replace("alice", "{user}")]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert schema.endswith("CrossSessionSearchArguments")
    assert "CrossSessionSearchArguments" in document["components"]["schemas"]


MEMORY = "/v1/users/alice/tools/memory_search"
DECIDED_TEXT = "We decided on Lisbon, the flights are cheaper."


def test_memory_search_answers_a_question_by_meaning_with_the_turns_around(server: str):
    answer = httpx.post(
        f"{server}{MEMORY}",
        json={"innerThought": THOUGHT, "query": "Which city did we choose for the retreat?"},
        headers=AUTH,
    )
    assert answer.status_code == 200, answer.text
    rows = json.loads(answer.text)
    assert any("Lisbon" in row["text"] for row in rows[:3]), rows
    first = rows[0]
    assert set(first) == {"sessionId", "timestamp", "type", "text", "before", "after", "score"}
    assert set(first["score"]) == {"keywordRank", "vectorRank", "fused"}


def test_memory_search_gives_the_typed_result_and_takes_the_mode(server: str):
    answer = httpx.post(
        f"{server}{MEMORY}?format=page&mode=keyword",
        json={"innerThought": THOUGHT, "query": "Lisbon flights", "context": 0, "limit": 2},
        headers=AUTH,
    )
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert (result["mode"], result["requested_mode"], result["notice"]) == (
        "keyword",
        "keyword",
        None,
    )
    assert result["hits"][0]["event"]["text"] == DECIDED_TEXT
    assert all(hit["before"] == [] and hit["after"] == [] for hit in result["hits"])


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"query": ""}, "empty"),
        ({"query": "x" * 1001}, "1001 characters"),
        ({"query": "x", "limit": 51}, "limit"),
        ({"query": "x", "since": "last week"}, "ISO-8601"),
        ({"query": "x", "userId": "bob"}, "unknown argument 'userId'"),
    ],
)
def test_memory_search_refuses_bad_arguments_with_a_line_a_model_can_act_on(
    server: str, arguments: dict, says: str
):
    answer = httpx.post(
        f"{server}{MEMORY}", json={"innerThought": THOUGHT, **arguments}, headers=AUTH
    )
    assert answer.status_code == 422, answer.text
    assert answer.text.startswith("Error: ") and says in answer.text


def test_memory_search_never_answers_with_another_users_events(server: str):
    answer = httpx.post(
        f"{server}{MEMORY}",
        json={"innerThought": THOUGHT, "query": "When is the launch, and which logo?", "limit": 50},
        headers=AUTH,
    )
    assert answer.status_code == 200, answer.text
    assert "Friday" not in answer.text and "blue logo" not in answer.text
