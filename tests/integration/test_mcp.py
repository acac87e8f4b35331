"""The official MCP Python client against `session-recall mcp` over stdio."""

import json
import os
import shutil

import anyio
import pytest
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from session_recall.cli import main
from tests.support.elasticsearch import REPO

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def sample_alias(es_url: str, module_alias: str, tmp_path_factory) -> str:
    home = tmp_path_factory.mktemp("home")
    args = ["--es-url", es_url, "--index", module_alias, "--home", str(home), "ingest"]
    result = CliRunner().invoke(main, [*args, str(REPO / "samples" / "sessions.ndjson")])
    assert result.exit_code == 0, result.output
    return module_alias


def mcp_server(es_url: str, alias: str, home: str, *args: str) -> StdioServerParameters:
    """How to start `session-recall mcp` with `args` against `alias`."""
    executable = shutil.which("session-recall")
    assert executable, "the session-recall console script is not installed"
    return StdioServerParameters(
        command=executable,
        args=["mcp", *args],
        env={
            "ELASTICSEARCH_URL": es_url,
            "SESSION_RECALL_INDEX": alias,
            "SESSION_RECALL_HOME": home,
            "PATH": os.environ.get("PATH", ""),
        },
    )


async def _session_calls(params: StdioServerParameters, calls: list[tuple[str, dict]]):
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            results = [await session.call_tool(name, args) for name, args in calls]
            return listed, results


def _text(result) -> str:
    return "".join(part.text for part in result.content)


def test_the_mcp_client_sees_alices_results_and_never_bobs(es_url, sample_alias, tmp_path):
    params = mcp_server(es_url, sample_alias, str(tmp_path), "--user", "alice")
    thought = {"innerThought": "checking decisions"}
    listed, (decided, bobs, smuggled, recalled) = anyio.run(
        _session_calls,
        params,
        [
            ("cross_session_search", {**thought, "query": "we decided"}),
            ("cross_session_search", {**thought, "query": "launch, Friday, blue logo"}),
            ("cross_session_search", {**thought, "query": "launch", "userId": "bob"}),
            ("memory_search", {**thought, "query": "When is the launch, and which logo?"}),
        ],
    )

    assert [tool.name for tool in listed.tools] == [
        "cross_session_search",
        "memory_search",
        "recall_memories",
    ]
    schema = listed.tools[0].input_schema
    assert "userId" not in schema["properties"] and schema["additionalProperties"] is False

    assert not decided.is_error
    assert "We decided on Lisbon" in _text(decided) and "s-trip" in _text(decided)
    assert "launch" not in _text(decided)
    assert _text(bobs) == "No results found."
    assert smuggled.is_error and "unknown argument 'userId'" in _text(smuggled)
    assert "checking decisions" not in _text(decided) + _text(bobs) + _text(smuggled)
    # memory_search is bound to alice as well: bob's launch plans never show.
    assert not recalled.is_error and "Friday" not in _text(recalled)


def test_contact_and_inbox_add_the_cross_conversation_tool(es_url, sample_alias, tmp_path):
    params = mcp_server(
        es_url, sample_alias, str(tmp_path),
        "--user", "acme", "--contact", "c-42", "--inbox", "web", "--current-session", "conv-102",
    )  # fmt: skip
    listed, (found,) = anyio.run(
        _session_calls,
        params,
        [("cross_conversation_search", {"innerThought": "t", "query": "order 7731"})],
    )
    assert [tool.name for tool in listed.tools] == [
        "cross_session_search",
        "memory_search",
        "cross_conversation_search",
        "recall_memories",
    ]
    text = _text(found)
    assert "conv-102" in text
    assert "conv-201" not in text and "conv-301" not in text and "conv-103" not in text
    # Another user (tenant) with the same contact and inbox ids stays out.
    assert "conv-901" not in text and "Globex" not in text


def test_kept_memories_over_mcp_are_the_bound_users_alone(es_url, sample_alias, tmp_path):
    """With --memory-writes, a model finds an event by its id, saves a memory from it and
    recalls it; bob's server lists, finds and retires none of alice's, and alice's
    events are no sources for him."""
    thought = {"innerThought": "keeping what matters"}
    alice = mcp_server(es_url, sample_alias, str(tmp_path), "--user", "alice", "--memory-writes")
    listed, (found, saved, recalled) = anyio.run(
        _session_calls,
        alice,
        [
            ("cross_session_search", {**thought, "query": "remember this"}),
            ("save_memory", {**thought, "statement": "Billing data never leaves Postgres.",
                             "kind": "instruction", "sources": ["sample-008"]}),
            ("recall_memories", {**thought, "query": "where is billing data kept?"}),
        ],
    )  # fmt: skip
    assert [tool.name for tool in listed.tools][-3:] == [
        "recall_memories",
        "save_memory",
        "retire_memory",
    ]
    assert '"eventId":"sample-008"' in _text(found)  # what save_memory takes as a source
    assert not saved.is_error, _text(saved)
    memory_id = json.loads(_text(saved))["saved"]["memoryId"]
    assert memory_id in _text(recalled) and "Postgres" in _text(recalled)

    bob = mcp_server(es_url, sample_alias, str(tmp_path), "--user", "bob", "--memory-writes")
    _, (searched, history, stolen, retired) = anyio.run(
        _session_calls,
        bob,
        [
            ("recall_memories", {**thought, "query": "billing data Postgres", "turns": 10}),
            ("recall_memories", {**thought, "query": "billing", "includeSuperseded": True}),
            ("save_memory", {**thought, "statement": "Billing is Postgres.", "kind": "fact",
                             "sources": ["sample-008"]}),
            ("retire_memory", {**thought, "memoryId": memory_id, "reason": "not yours"}),
        ],
    )  # fmt: skip
    for result in (searched, history):
        assert memory_id not in _text(result) and "Postgres" not in _text(result)
    assert stolen.is_error and "sample-008" in _text(stolen)
    assert retired.is_error and "No memory of this user" in _text(retired)

    # A server without --memory-writes recalls, and writes nothing.
    read_only = mcp_server(es_url, sample_alias, str(tmp_path), "--user", "alice")
    listed, (refused,) = anyio.run(
        _session_calls, read_only, [("save_memory", {**thought, "statement": "x"})]
    )
    assert "save_memory" not in [tool.name for tool in listed.tools]
    assert refused.is_error and "no tool named 'save_memory'" in _text(refused)
