"""A query with no word in it (",,,", "...") is refused alike by every search, in every
mode and on every surface: the CLI, HTTP and the tools (which MCP passes on as they
are). memory_search once answered such a query with unrelated hits (its vector is
near anything), where `search` refused it."""

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.embeddings import StaticEmbedder
from session_recall.http import create_app
from session_recall.indexer import Event, Submission, Writer
from session_recall.recall import Searchers
from session_recall.tools import conversation_tool, cross_session_tool, memory_tool

pytestmark = pytest.mark.integration

KEY = b"query-without-word-cursor-key-32"
QUERIES = [",,,", "...", " ?! "]
THOUGHT = "recall"


def said(query: str) -> str:
    return f"The query {query[:40]!r} has no word to search for"


@pytest.fixture(scope="module")
def stored(es: Elasticsearch, es_url: str, module_alias: str, tmp_path_factory) -> Settings:
    texts = ["we picked postgres for the database", "the cat sat on the mat", "see you, bye"]
    events = [
        Event.model_validate(
            {"user_id": "alice", "session_id": "s1", "event_id": f"e{i}", "type": "user_message",
             "timestamp": f"2026-03-01T10:00:0{i}Z", "text": text}
        )
        for i, text in enumerate(texts)
    ]  # fmt: skip
    written = Writer(es, module_alias, embedder=StaticEmbedder()).write(map(Submission, events))
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=module_alias)
    return Settings(
        ELASTICSEARCH_URL=es_url,
        SESSION_RECALL_INDEX=module_alias,
        SESSION_RECALL_HOME=tmp_path_factory.mktemp("home"),
        SESSION_RECALL_EMBEDDER="static",
    )


def _cli(settings: Settings, *args: str):
    head = ["--es-url", str(settings.elasticsearch_url), "--index", settings.index]
    return CliRunner().invoke(main, [*head, "--home", str(settings.home), *args])


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(
    "command",
    [
        ["memory-search", "--user", "alice", "--mode", "keyword"],
        ["memory-search", "--user", "alice", "--mode", "semantic"],
        ["memory-search", "--user", "alice", "--mode", "hybrid"],
        ["memory-search", "--user", "alice"],
        ["search", "--user", "alice"],
        ["search-session", "--user", "alice", "--session", "s1"],
    ],
    ids=["memory-keyword", "memory-semantic", "memory-hybrid", "memory", "search", "session"],
)
def test_the_cli_refuses_a_query_without_a_word_alike(stored, command, query):
    result = _cli(stored, *command, query)
    assert result.exit_code == 2, result.output
    assert said(query) in result.output


ENDPOINTS = [
    "/v1/users/alice/tools/memory_search?mode=keyword",
    "/v1/users/alice/tools/memory_search?mode=semantic",
    "/v1/users/alice/tools/memory_search?mode=hybrid",
    "/v1/users/alice/tools/cross_session_search",
    "/v1/users/alice/sessions/s1/tools/conversation_search",
]


@pytest.mark.parametrize("query", QUERIES)
def test_http_refuses_a_query_without_a_word_alike(stored, query):
    with TestClient(create_app(stored, enrich=False)) as web:
        for path in ENDPOINTS:
            answer = web.post(path, json={"innerThought": THOUGHT, "query": query})
            assert answer.status_code == 422, (path, answer.text)
            assert said(query) in answer.text, (path, answer.text)


@pytest.mark.parametrize("query", QUERIES)
def test_the_tools_refuse_a_query_without_a_word_alike(es, stored, query):
    searchers = Searchers(es, stored.index, KEY, embedder=StaticEmbedder())
    tools = [
        memory_tool(searchers.memory(user_id="alice"), mode="keyword"),
        memory_tool(searchers.memory(user_id="alice"), mode="semantic"),
        memory_tool(searchers.memory(user_id="alice"), mode="hybrid"),
        cross_session_tool(searchers.cross_session(user_id="alice")),
        conversation_tool(searchers.conversation(user_id="alice", session_id="s1")),
    ]
    for tool in tools:
        result = tool.call({"innerThought": THOUGHT, "query": query})
        assert result.is_error, (tool.name, result.text)
        assert said(query) in result.text, (tool.name, result.text)


def test_a_word_among_the_punctuation_is_still_searched(stored):
    result = _cli(stored, "memory-search", "--user", "alice", "--mode", "keyword", "postgres?!")
    assert result.exit_code == 0, result.output
    assert "postgres" in result.output
