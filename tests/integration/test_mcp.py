"""The official MCP Python client against `session-recall mcp` over stdio."""

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

    assert [tool.name for tool in listed.tools] == ["cross_session_search", "memory_search"]
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
    ]
    text = _text(found)
    assert "conv-102" in text
    assert "conv-201" not in text and "conv-301" not in text and "conv-103" not in text
    # Another user (tenant) with the same contact and inbox ids stays out.
    assert "conv-901" not in text and "Globex" not in text
