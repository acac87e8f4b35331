"""A hostile user on every surface, against the real node: the CLI's commands, the
HTTP routes (besides the schemathesis pass of `test_serve_hostile`) and the MCP tools.
Bad input gets a clear answer: no traceback, no 5xx but 503, exit codes from the
README's table, and nothing of another user shown."""

import gzip
from collections.abc import Iterator
from pathlib import Path

import anyio
import orjson
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.tools import cross_session_tool
from session_recall.tools.searchers import searchers_for
from tests.integration.test_mcp import _session_calls, _text, mcp_server
from tests.support.ndjson import event, write_ndjson

pytestmark = pytest.mark.integration

README_EXIT_CODES = {0, 1, 2, 3}
SECRET = "bob's secret plan about zeppelins"


@pytest.fixture(scope="module")
def hostile_alias(es_url: str, module_alias: str, tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("events")
    events = [event(i, user="alice") for i in range(5)] + [event(9, user="bob", text=SECRET)]
    result = CliRunner().invoke(
        main,
        [
            "--es-url",
            es_url,
            "--index",
            module_alias,
            "ingest",
            str(write_ndjson(folder / "e", events)),
        ],
    )
    assert result.exit_code == 0, result.output
    return module_alias


def _hostile_commands(tmp: Path) -> Iterator[list[str]]:
    deep = tmp / "deep.ndjson"
    deep.write_bytes(b'{"a":' * 3000 + b"1" + b"}" * 3000 + b"\n" + b"\xff\xfe\x00garbage\n")
    corrupt = tmp / "corrupt.ckpt"
    corrupt.write_bytes(b"\x00\x01not json")
    yield from [
        ["search", "--user", "alice", "--page", "-1", "weather"],
        ["search", "--user", "alice", "--page-size", "0", "weather"],
        ["search", "--user", "alice", "--page-size", "100000000", "weather"],
        ["search", "--user", "alice", "--since", "9999-99-99", "weather"],
        ["search", "--user", "alice", "--cursor", "AAAA", "weather"],
        ["search", "--user", "", "weather"],
        ["search", "--user", "alice", "x" * 100_000],
        ["search", "--user", "alice", ",,,"],
        ["search-session", "--user", "alice", "--session", "s-0", "--page", "-3", "x"],
        ["memory-search", "--user", "alice", "--limit", "-5", "weather"],
        ["memory-search", "--user", "alice", "--mode", "telepathy", "weather"],
        ["memory-search", "--user", "alice", "--until", "yesterday", "weather"],
        ["show", "--user", "alice", "--session", "s-0", "--page", "-1"],
        ["sessions", "--user", "alice", "--page-size", "-1"],
        ["delete", "--user", "", "--dry-run"],
        ["delete", "--session", "s-0"],
        ["prune", "--before", "9999-01-01"],
        ["prune", "--before", "not a date"],
        ["compact", "--before", "not a date"],
        ["compact", "--before", "99999-01-01"],
        ["ingest", str(deep), "--dead-letter", str(tmp / "dead.ndjson")],
        ["ingest", str(deep), "--checkpoint", str(corrupt), "--dead-letter", str(tmp / "d2")],
        ["ingest", str(deep), "--dead-letter", str(tmp / "missing" / "dead.ndjson")],
        ["ingest", str(deep), "--max-age-days", "0"],
        ["ingest", str(deep), "--max-new-partitions", "-1"],
        ["ingest", "/dev/null/nope"],
        ["setup", "--shards", "-1"],
        ["embed", "--backfill", "--page-size", "0"],
    ]


def test_every_command_answers_bad_input_with_a_message_and_a_readme_exit_code(
    es_url: str, hostile_alias: str, tmp_path: Path
):
    for args in _hostile_commands(tmp_path):
        result = CliRunner().invoke(main, ["--es-url", es_url, "--index", hostile_alias, *args])
        what = f"{args}: {result.output}"
        assert result.exit_code in README_EXIT_CODES, what
        assert result.exception is None or isinstance(result.exception, SystemExit), what
        assert "Traceback" not in result.output, what
        assert SECRET not in result.output, what
    assert not (tmp_path / "missing").exists(), "a folder was made that nobody named"


@pytest.mark.parametrize(
    "index", ["*", "a,b", "probe*", "../x", "x y", "_all", "-x", "Probe", ".security"]
)
def test_no_index_but_one_concrete_alias_is_reached(es_url: str, index: str):
    result = CliRunner().invoke(
        main, ["--es-url", es_url, "--index", index, "delete", "--user", "alice", "--dry-run"]
    )
    assert result.exit_code == 3, result.output
    assert "is not a usable index alias" in result.output


def test_http_refuses_what_it_cannot_take_with_the_right_status(
    es_url: str, hostile_alias: str, tmp_path: Path
):
    settings = Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=hostile_alias, SESSION_RECALL_HOME=tmp_path
    )
    thought = {"innerThought": "t"}
    tool = "/v1/users/alice/tools/cross_session_search"
    with TestClient(create_app(settings), raise_server_exceptions=False) as web:
        answers = {
            "gzip": web.post(
                "/v1/events",
                content=gzip.compress(orjson.dumps(event(50))),
                headers={"content-type": "application/json", "content-encoding": "gzip"},
            ),
            "twice": web.post("/v1/events?refresh=wait_for&refresh=false", json=event(51)),
            "tool page '1'": web.post(tool, json={**thought, "query": "weather", "page": "1"}),
            "tool page_size 0": web.post(f"{tool}?page_size=0", json={**thought, "query": "x"}),
            "read page_size 0": web.get("/v1/users/alice/sessions?page_size=0"),
            "read page -3": web.get("/v1/users/alice/sessions/s-0/events?page=-3"),
            "memory limit true": web.post(
                "/v1/users/alice/tools/memory_search",
                json={**thought, "query": "weather", "limit": True},
            ),
            "old event": web.post("/v1/events", json=event(52, timestamp="1970-01-01T00:00:00Z")),
            "bob via alice": web.post(tool, json={**thought, "query": "zeppelins"}),
        }
    statuses = {name: response.status_code for name, response in answers.items()}
    assert statuses == {
        "gzip": 415,
        "twice": 400,
        "tool page '1'": 422,
        "tool page_size 0": 422,
        "read page_size 0": 422,
        "read page -3": 422,
        "memory limit true": 422,
        "old event": 422,
        "bob via alice": 200,
    }, {name: r.text for name, r in answers.items()}
    assert "zeppelins" not in answers["bob via alice"].text
    assert "more than 3650 days before now" in answers["old event"].text


def test_mcp_tools_answer_bad_arguments_as_errors_and_go_on(
    es_url: str, hostile_alias: str, tmp_path: Path
):
    params = mcp_server(es_url, hostile_alias, str(tmp_path), "--user", "alice")
    thought = {"innerThought": "t"}
    calls = [
        ("cross_session_search", {**thought, "query": "weather", "page": "1"}),
        ("cross_session_search", {**thought, "query": "x" * 100_000}),
        ("cross_session_search", {**thought, "query": "zeppelins", "userId": "bob"}),
        ("memory_search", {**thought, "query": "weather", "limit": True}),
        ("memory_search", {**thought, "query": "weather", "mode": "telepathy"}),
        ("no_such_tool", {**thought, "query": "weather"}),
        ("cross_session_search", {**thought, "query": "weather"}),  # still serving
    ]
    _listed, results = anyio.run(_session_calls, params, calls)
    *refused, fine = results
    for (name, args), result in zip(calls, refused, strict=False):
        text = _text(result)
        assert result.is_error, (name, args, text)
        assert "Traceback" not in text and "zeppelins" not in text, text
    assert not fine.is_error and "weather" in _text(fine)


def test_a_negative_page_is_the_models_first_page_on_every_tool_surface(
    es: Elasticsearch, es_url: str, hostile_alias: str, tmp_path: Path
):
    """The reference contract: "negative values are clamped to 0". Python, HTTP and MCP
    all show page 0 for page -2; the CLI's --page still refuses it (above)."""
    thought = {"innerThought": "t"}
    first, back = ({**thought, "query": "weather", "page": page} for page in (0, -2))
    settings = Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=hostile_alias, SESSION_RECALL_HOME=tmp_path
    )
    tool = cross_session_tool(searchers_for(es, settings).cross_session(user_id="alice"))
    python = [tool.call(arguments) for arguments in (first, back)]
    assert not python[1].is_error and python[1].text == python[0].text
    assert "weather" in python[0].text
    path = "/v1/users/alice/tools/cross_session_search"
    with TestClient(create_app(settings, enrich=False)) as web:
        http = [web.post(path, json=arguments) for arguments in (first, back)]
    assert [r.status_code for r in http] == [200, 200], http[1].text
    assert http[1].text == http[0].text == python[0].text
    params = mcp_server(es_url, hostile_alias, str(tmp_path), "--user", "alice")
    _listed, mcp = anyio.run(
        _session_calls, params, [("cross_session_search", a) for a in (first, back)]
    )
    assert not mcp[1].is_error and _text(mcp[1]) == _text(mcp[0]) == python[0].text
