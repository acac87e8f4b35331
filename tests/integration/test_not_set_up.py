"""An alias that is not set up means "retry later" on every surface: the CLI exits 3,
HTTP answers 503 with Retry-After on the write and the read side alike, and a tool
call is flagged as an error. A producer keeps its events; a model is not blamed."""

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.tools import cross_session_tool
from session_recall.tools.searchers import searchers_for
from tests.support.ndjson import event

pytestmark = pytest.mark.integration

MISSING = "t-never-set-up_5e1c"


@pytest.fixture
def missing(es_url: str, tmp_path) -> Settings:
    return Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=MISSING, SESSION_RECALL_HOME=tmp_path
    )


def test_the_cli_exits_3_and_names_setup(missing: Settings):
    args = ["--es-url", str(missing.elasticsearch_url), "--index", MISSING,
            "--home", str(missing.home)]  # fmt: skip
    result = CliRunner().invoke(main, [*args, "search", "--user", "alice", "x"])
    assert result.exit_code == 3, result.output
    assert f"session-recall --index {MISSING} setup" in result.output


@pytest.mark.parametrize(
    "command",
    [
        ["embed", "--status"],
        ["embed"],
        ["compact"],
        ["compact", "--dry-run"],
        ["partitions"],
        ["prune", "--before", "2025-01-01"],
    ],
    ids=" ".join,
)
def test_the_commands_over_the_alias_exit_3_rather_than_report_nothing_to_do(
    missing: Settings, command: list[str]
):
    """Monitoring that reads exit 0 as "fine" must not be told so for an alias that is
    not there: "0 event(s) await enrichment" or "No index behind it" said it with 0."""
    args = ["--es-url", str(missing.elasticsearch_url), "--index", MISSING,
            "--home", str(missing.home)]  # fmt: skip
    result = CliRunner().invoke(main, [*args, *command])
    assert result.exit_code == 3, result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1
    assert "not set up" in result.output and f"--index {MISSING} setup" in result.output


def test_http_answers_503_with_retry_after_on_both_sides(missing: Settings):
    with TestClient(create_app(missing)) as web:
        written = web.post("/v1/events", json=event(1))
        searched = web.post(
            "/v1/users/alice/tools/cross_session_search",
            json={"innerThought": "t", "query": "x"},
        )
    for response in (written, searched):
        assert response.status_code == 503, response.text
        assert int(response.headers["retry-after"]) > 0
        assert "setup" in response.json()["hint"]


def test_a_tool_call_is_flagged_as_an_error(es, missing: Settings):
    searchers = searchers_for(es, missing)
    result = cross_session_tool(searchers.cross_session(user_id="alice")).call(
        {"innerThought": "t", "query": "x"}
    )
    assert result.is_error and "setup" in result.text


async def test_every_adapter_says_to_run_setup_on_its_first_call(missing: Settings):
    """docs/frameworks.md: the adapters never create an alias; each names `setup`."""
    from google.adk.events.event import Event as AdkEvent
    from google.adk.sessions.session import Session
    from google.genai import types

    from session_recall.core.errors import SessionRecallError
    from session_recall.integrations.adk import SessionRecallMemoryService
    from session_recall.integrations.langchain import SessionRecallRetriever
    from session_recall.integrations.openai_agents import SessionRecallSession

    settings = missing.model_copy(update={"embedder": "none"})
    said = AdkEvent(id="e1", author="user", timestamp=1.5e9, content=types.UserContent("hi"))
    memory = SessionRecallMemoryService(settings=settings)
    session = SessionRecallSession("s", user_id="alice", settings=settings)
    calls = [
        memory.add_session_to_memory(
            Session(app_name="app", user_id="alice", id="s", events=[said])
        ),
        memory.search_memory(app_name="app", user_id="alice", query="hi"),
        session.add_items([{"role": "user", "content": "hi"}]),
        session.get_items(),
        SessionRecallRetriever(user_id="alice", settings=settings).ainvoke("hi"),
    ]
    for call in calls:
        with pytest.raises(SessionRecallError) as refused:
            await call
        assert "setup" in f"{refused.value} {refused.value.hint}", refused.value
