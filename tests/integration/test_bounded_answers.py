"""The recall tools' answers are bounded on every surface (issue 57, item 2): ten events
of 936 KB made a 9.36 MB answer from cross_session_search and conversation_search, and
memory_search, which shows each hit's neighbours whole, 26.2 MB. Each text is cut at
2,000 characters and an answer's texts at 20,000 together; a cut says so, names its
event, and the read by event id gives the event whole."""

import asyncio
import json

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.recall import Searchers
from session_recall.recall.adk_scope import memory_user
from session_recall.tools import (
    conversation_tool,
    cross_session_tool,
    memory_tool,
    tool_definitions,
)
from tests.support.events import event, write_events

pytestmark = pytest.mark.integration

KEY = b"bounded-answers-cursor-key-32byt"
LENGTH = 936_112
TEXT = ("plumbvortex " * (LENGTH // 12 + 1))[:LENGTH]
MARK = "…[truncated, 936,112 characters]"
THOUGHT = "recall"
# An answer is about 20,000 characters at most: its other fields are estimated.
ANSWER = 22_000


@pytest.fixture(scope="module")
def stored(es: Elasticsearch, es_url: str, module_alias: str, tmp_path_factory) -> Settings:
    events = [
        event(f"big-{i}", user_id="zoe", session_id="s-big", text=TEXT,
              timestamp=f"2026-03-01T10:00:{i:02d}Z")
        for i in range(10)
    ] + [
        event(f"adk-{i}", user_id=memory_user("app", "zoe"), session_id="s-adk", text=TEXT,
              timestamp=f"2026-03-01T11:00:{i:02d}Z")
        for i in range(3)
    ]  # fmt: skip
    write_events(es, module_alias, events)
    return Settings(
        ELASTICSEARCH_URL=es_url,
        SESSION_RECALL_INDEX=module_alias,
        SESSION_RECALL_HOME=tmp_path_factory.mktemp("home"),
        SESSION_RECALL_EMBEDDER="none",
    )


def _texts(rows: list[dict]) -> list[str]:
    found = []
    for row in rows:
        found.append(row["text"])
        found += [turn["text"] for turn in row.get("before", []) + row.get("after", [])]
    return found


def _check_rows(answer: str) -> list[dict]:
    assert len(answer) < ANSWER, len(answer)
    rows = json.loads(answer)
    assert len(rows) == 10  # nothing dropped: every hit of the page is there
    texts = _texts(rows)
    assert all(text.endswith(MARK) for text in texts)
    assert sum(len(text) - len(MARK) for text in texts) <= 20_000 - 140 * len(texts)
    assert all(row["eventId"].startswith("big-") for row in rows)
    return rows


@pytest.fixture
def searchers(es: Elasticsearch, stored: Settings) -> Searchers:
    return Searchers(es, stored.index, KEY)


def test_each_tool_answers_within_the_bounds(searchers: Searchers):
    tools = [
        cross_session_tool(searchers.cross_session(user_id="zoe")),
        conversation_tool(searchers.conversation(user_id="zoe", session_id="s-big")),
        memory_tool(searchers.memory(user_id="zoe"), mode="keyword"),
    ]
    for tool in tools:
        result = tool.call({"innerThought": THOUGHT, "query": "plumbvortex"})
        assert not result.is_error, result.text
        _check_rows(result.text)
        assert "2,000 characters" in tool.description  # the description states the bound


def test_memory_search_counts_the_neighbours_in_the_bound(searchers: Searchers):
    tool = memory_tool(searchers.memory(user_id="zoe"), mode="keyword")
    result = tool.call({"innerThought": THOUGHT, "query": "plumbvortex", "context": 10})
    rows = _check_rows(result.text)
    assert all(len(row["before"]) + len(row["after"]) >= 9 for row in rows)


def test_http_answers_within_the_bounds_and_reads_the_event_whole(stored: Settings):
    paths = [
        "/v1/users/zoe/tools/cross_session_search",
        "/v1/users/zoe/sessions/s-big/tools/conversation_search",
        "/v1/users/zoe/tools/memory_search?mode=keyword",
    ]
    body = {"innerThought": THOUGHT, "query": "plumbvortex"}
    with TestClient(create_app(stored, enrich=False)) as web:
        for path in paths:
            answer = web.post(path, json=body)
            assert answer.status_code == 200, answer.text[:300]
            rows = _check_rows(answer.text)
            typed = web.post(path, params={"format": "page"}, json=body)
            assert len(typed.content) < ANSWER + 5_000, len(typed.content)
        whole = web.get(f"/v1/users/zoe/events/{rows[0]['eventId']}")
        assert whole.status_code == 200, whole.text[:300]
        [item] = whole.json()["items"]
        assert item["text"] == TEXT
        assert web.get(f"/v1/users/bob/events/{rows[0]['eventId']}").json()["items"] == []
        described = web.get("/openapi.json").json()["paths"]
        tool = described["/v1/users/{user}/tools/cross_session_search"]["post"]
        assert "2,000 characters" in tool["description"]
        assert {"get", "delete"} <= set(described["/v1/users/{user}/events/{event}"])


def test_the_bounds_are_settable(stored: Settings):
    settings = stored.model_copy(update={"tool_hit_chars": 500, "tool_answer_chars": 3_000})
    with TestClient(create_app(settings, enrich=False)) as web:
        answer = web.post(
            "/v1/users/zoe/tools/cross_session_search",
            json={"innerThought": THOUGHT, "query": "plumbvortex"},
        )
    texts = _texts(json.loads(answer.text))
    # 3,000 less the rows' other fields (about 160 each), shared by ten
    assert len({len(text) for text in texts}) == 1 and 0 < len(texts[0]) - len(MARK) < 300


def _cli(settings: Settings, *args: str):
    head = ["--es-url", str(settings.elasticsearch_url), "--index", settings.index]
    return CliRunner().invoke(main, [*head, "--home", str(settings.home), *args])


def test_the_cli_answers_within_the_bounds_and_shows_the_event_whole(stored: Settings):
    for command in (
        ["search", "--user", "zoe", "plumbvortex"],
        ["search-session", "--user", "zoe", "--session", "s-big", "plumbvortex"],
        ["memory-search", "--user", "zoe", "--mode", "keyword", "plumbvortex"],
    ):
        result = _cli(stored, *command)
        assert result.exit_code == 0, result.output[:300]
        _check_rows(result.output)
    shown = _cli(stored, "show-event", "--user", "zoe", "big-3")
    assert shown.exit_code == 0, shown.output[:300]
    assert json.loads(shown.output)["items"][0]["text"] == TEXT
    missing = _cli(stored, "show-event", "--user", "zoe", "nope")
    assert missing.exit_code == 1 and "has no event 'nope'" in missing.output
    listed = _cli(stored, "tools", "--style", "mcp")
    assert all("2,000 characters" in tool["description"] for tool in json.loads(listed.output))


def test_every_definition_states_the_bound():
    for style in ("openai", "anthropic", "mcp"):
        for definition in tool_definitions(style=style):
            text = json.dumps(definition, ensure_ascii=False)
            assert "cut at 2,000 characters" in text and "20,000" in text


def test_langchain_answers_within_the_bounds(stored: Settings):
    from session_recall.integrations.langchain import SessionRecallRetriever

    retriever = SessionRecallRetriever(user_id="zoe", settings=stored, mode="keyword")
    documents = retriever.invoke("plumbvortex")
    assert len(documents) == 10
    assert all(d.page_content.endswith(MARK) for d in documents)
    assert all(d.metadata["full_length"] == LENGTH for d in documents)
    assert sum(len(d.page_content) for d in documents) < ANSWER


def test_adk_answers_within_the_bounds(stored: Settings):
    from session_recall.integrations.adk import SessionRecallMemoryService

    service = SessionRecallMemoryService(settings=stored, mode="keyword")
    try:
        found = asyncio.run(
            service.search_memory(app_name="app", user_id="zoe", query="plumbvortex")
        )
    finally:
        service.close()
    texts = [part.text for memory in found.memories for part in memory.content.parts]
    assert len(texts) == 3 and all(text.endswith(MARK) for text in texts)
    turns = [
        t["text"]
        for m in found.memories
        for t in m.custom_metadata["before"] + m.custom_metadata["after"]
    ]
    assert all(turn.endswith(MARK) for turn in turns)
    assert sum(len(text) for text in texts + turns) < ANSWER


def test_openai_agents_tool_answers_within_the_bounds(searchers: Searchers):
    from session_recall.integrations.openai_agents import memory_search_tool

    tool = memory_search_tool(searchers.memory(user_id="zoe"), mode="keyword")
    assert "2,000 characters" in tool.description
    arguments = json.dumps({"innerThought": THOUGHT, "query": "plumbvortex"})
    answer = asyncio.run(tool.on_invoke_tool(None, arguments))
    _check_rows(answer)
