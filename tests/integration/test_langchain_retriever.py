"""LangChain's own retriever contract (langchain-tests' `RetrieversIntegrationTests`)
against `SessionRecallRetriever` on a real node, and a retriever tool as LangGraph
calls it, which answers from the stored events of its user and never another's."""

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from langchain_core.tools import create_retriever_tool
from langchain_tests.integration_tests import RetrieversIntegrationTests
from pydantic import ValidationError

from session_recall.config import Settings
from session_recall.indexer import Event, Submission, Writer
from session_recall.integrations.langchain import SessionRecallRetriever

pytestmark = pytest.mark.integration

USER, OTHER = "u-lc", "u-lc-other"


def _events(user: str, topic: str, count: int) -> list[dict[str, Any]]:
    return [
        {
            "user_id": user,
            "session_id": f"s-{user}-{i // 3}",
            "timestamp": f"2026-02-0{1 + i // 3}T10:00:{i:02d}Z",
            "type": "user_message" if i % 2 == 0 else "assistant_message",
            "text": f"{topic} note {i}: we compared the Postgres and MySQL replicas",
            "event_id": f"{user}-{i}",
        }
        for i in range(count)
    ]


@pytest.fixture(scope="module")
def stored(es: Elasticsearch, es_url: str, module_alias: str) -> Iterator[Settings]:
    events = [*_events(USER, "database", 8), *_events(OTHER, "secret database", 8)]
    written = Writer(es, module_alias).write(
        Submission(Event.model_validate(event)) for event in events
    )
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=module_alias)
    yield Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=module_alias, SESSION_RECALL_EMBEDDER="none"
    )


class TestSessionRecallRetrieverContract(RetrieversIntegrationTests):
    """langchain-tests 1.1.9, unchanged: k at construction and per call, Documents from
    `invoke` and `ainvoke` (the async client)."""

    settings: Settings

    @pytest.fixture(autouse=True)
    def _stored(self, stored: Settings) -> None:
        type(self).settings = stored

    @property
    def retriever_constructor(self) -> type[SessionRecallRetriever]:
        return SessionRecallRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"user_id": USER, "settings": self.settings}

    @property
    def retriever_query_example(self) -> str:
        return "which database replicas did we compare?"


def test_documents_carry_the_event_and_never_another_users(stored: Settings):
    retriever = SessionRecallRetriever(user_id=USER, settings=stored, k=8, context=1)
    documents = retriever.invoke("Postgres replicas")
    assert len(documents) == 8
    assert all(d.metadata["session_id"].startswith(f"s-{USER}-") for d in documents)
    assert not any("secret" in d.page_content for d in documents)
    first = documents[0]
    assert first.id == first.metadata["event_id"]
    assert {"timestamp", "type", "score", "before", "after"} <= set(first.metadata)
    assert any(d.metadata["before"] or d.metadata["after"] for d in documents)
    assert retriever.invoke("Postgres replicas", k=2, mode="keyword")[0].page_content


async def test_ainvoke_gives_what_invoke_gives(stored: Settings):
    retriever = SessionRecallRetriever(user_id=USER, settings=stored, k=5)
    synced = retriever.invoke("MySQL replicas")
    awaited = await retriever.ainvoke("MySQL replicas")
    assert [d.id for d in awaited] == [d.id for d in synced]


def test_bad_k_or_mode_is_refused_when_built_or_called(stored: Settings):
    with pytest.raises(ValueError):
        SessionRecallRetriever(user_id=USER, settings=stored, k=0)
    with pytest.raises(Exception, match="mode"):
        SessionRecallRetriever(user_id=USER, settings=stored, mode="fuzzy")
    with pytest.raises(Exception, match="empty"):
        SessionRecallRetriever(user_id=USER, settings=stored).invoke("  ")


async def test_a_retriever_tool_answers_from_its_users_events_only(stored: Settings):
    """The tool LangGraph's ToolNode calls: the model gives a query, the user is the
    retriever's. Another user holding the same words is never shown."""
    tool = create_retriever_tool(
        SessionRecallRetriever(user_id=USER, settings=stored, k=4),
        "recall_past_sessions",
        "Search this user's past sessions for what they said or decided.",
    )
    assert set(tool.args) == {"query"}
    answer = tool.invoke({"query": "secret database replicas"})
    assert "we compared the Postgres and MySQL replicas" in answer
    assert "secret" not in answer
    call = {"name": tool.name, "args": {"query": "MySQL"}, "id": f"call-{uuid.uuid4().hex[:6]}"}
    message = await tool.ainvoke({**call, "type": "tool_call"})
    assert message.tool_call_id == call["id"] and "database note" in message.content
    assert "secret" not in message.content


def test_the_user_and_every_other_field_stay_as_built(stored: Settings):
    """Bound when built: an assignment is refused, so no code path can point a built
    retriever at another user's events."""
    retriever = SessionRecallRetriever(user_id=USER, settings=stored, k=4)
    for field, value in (("user_id", "someone-else"), ("index", "_all"), ("k", 50)):
        with pytest.raises(ValidationError, match="frozen"):
            setattr(retriever, field, value)
    assert retriever.user_id == USER
    docs = retriever.invoke("replicas")
    assert docs and all(doc.metadata["session_id"].startswith(f"s-{USER}-") for doc in docs)
