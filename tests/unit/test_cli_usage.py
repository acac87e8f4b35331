"""Usage mistakes at the command line end in a message that names the fix and a usage
exit code (2), never a traceback, and before any request is sent: none of these tests
has an Elasticsearch to talk to."""

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from session_recall.cli import main

NOWHERE = "http://127.0.0.1:9"  # nothing listens: a test that reached it would fail


def _run(*args: str, env: dict[str, str] | None = None, home: Path | None = None) -> Result:
    options = ["--home", str(home)] if home else []
    return CliRunner().invoke(main, [*options, *args], env=env, prog_name="session-recall")


def _refused(result: Result, *says: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    for words in says:
        assert words in result.output


def _misconfigured(result: Result, *says: str) -> None:
    """A configuration error: one line naming the variable, exit 3, as every other."""
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output and result.output.startswith("Error: ")
    for words in says:
        assert words in result.output


@pytest.mark.parametrize("url", ["127.0.0.1:9200", "localhost", "http://", "ftp://h:1"])
def test_a_malformed_elasticsearch_url_is_named_with_an_example(url: str):
    _misconfigured(_run("setup", env={"ELASTICSEARCH_URL": url}), url, "http://127.0.0.1:9200")


def test_a_malformed_url_never_shows_its_credentials():
    result = _run("--es-url", "u:hunter2@es.internal", "setup")
    _misconfigured(result, "***@es.internal")
    assert "hunter2" not in result.output


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"SESSION_RECALL_EMBEDDER": "bogus"}, "SESSION_RECALL_EMBEDDER: Input should be"),
        ({"SESSION_RECALL_EMBEDDINGS_DIMS": "100000"}, "SESSION_RECALL_EMBEDDINGS_DIMS: "),
        ({"SESSION_RECALL_EMBEDDINGS_DIMS": "x"}, "SESSION_RECALL_EMBEDDINGS_DIMS: "),
    ],
)
def test_a_configuration_error_names_its_variable(env: dict[str, str], says: str):
    _misconfigured(_run("--es-url", NOWHERE, "search", "--user", "a", "x", env=env), says)


@pytest.mark.parametrize(
    "index", ["*", "a,b", "probe*", "../x", "x y", "Probe", "_all", "-x", ".hidden", "x" * 201]
)
@pytest.mark.parametrize(
    "command", [["setup"], ["delete", "--user", "alice", "--dry-run"], ["search", "-u", "a", "x"]]
)
def test_only_one_concrete_alias_is_taken_as_the_index(index: str, command: list[str]):
    for given in (["--index", index], []):
        env = {} if given else {"SESSION_RECALL_INDEX": index}
        result = _run("--es-url", NOWHERE, *given, *command, env=env)
        _misconfigured(result, "SESSION_RECALL_INDEX (--index)", "is not a usable index alias")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-", "--follow"], "--checkpoint and --follow need a FILE"),
        (["-", "--checkpoint", "x"], "--checkpoint and --follow need a FILE"),
        (["no/such/file.ndjson"], "cannot read no/such/file.ndjson"),
        ([], "Missing argument"),
    ],
)
def test_ingest_usage_errors_exit_2(tmp_path: Path, args: list[str], says: str):
    _refused(_run("--es-url", NOWHERE, "ingest", *args, home=tmp_path), says)


_NO_USER = "Missing option '--user'"
_INCOMPLETE = "Give --user alone, with --session, with --event, or with --contact and --inbox."


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--session", "s"], _NO_USER),
        (["--contact", "c"], _NO_USER),
        (["--contact", "c", "--inbox", "i"], _NO_USER),
        ([], _NO_USER),
        (["--user", "u", "--inbox", "i"], _INCOMPLETE),
        (["--user", "u", "--session", "s", "--contact", "c", "--inbox", "i"], _INCOMPLETE),
    ],
)
def test_delete_needs_a_complete_scope(args: list[str], says: str):
    _refused(_run("--es-url", NOWHERE, "delete", *args), says)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--max-body-bytes", "0"], ["--max-body-bytes", "1024"]),
        (["--max-body-bytes", "2000000", "--max-inflight-bytes", "1048576"],
         ["--max-body-bytes (2000000) must not exceed --max-inflight-bytes (1048576)"]),
        (["--max-events-per-request", "20", "--max-pending-events", "10"],
         ["--max-events-per-request (20)", "--max-pending-events (10)"]),
    ],
)  # fmt: skip
def test_a_serve_limit_out_of_bounds_names_its_flag(args: list[str], says: list[str]):
    _refused(_run("--es-url", NOWHERE, "serve", *args), *says)


def test_a_command_that_passes_its_checks_does_reach_for_the_node():
    # What every exit 2 here rules out: a request to NOWHERE fails otherwise.
    result = _run("--es-url", NOWHERE, "delete", "--user", "u")
    assert result.exit_code == 3, result.output
    assert "did not answer" in result.output


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--user", ""], "--user"),
        (["--user", " "], "--user"),
        (["--user", "alice", "--session", ""], "--session"),
        (["--user", "acme", "--contact", "c", "--inbox", "  "], "--inbox"),
        (["--user", "u" * 513], "--user"),
    ],
)
def test_delete_with_an_empty_or_overlong_id_is_a_usage_error(args: list[str], option: str):
    _refused(_run("--es-url", NOWHERE, "delete", *args), f"Invalid value for {option}")


@pytest.mark.parametrize("since", ["1969-12-31T23:59:59Z", "9999-12-31T23:59:59Z"])
def test_since_out_of_range_gets_the_real_reason(tmp_path: Path, since: str):
    result = _run("--es-url", NOWHERE, "search", "--user", "alice", "--since", since,
                  "--show-query", "x", home=tmp_path)  # fmt: skip
    _refused(result, "out of range", "1970-01-01", "2262-04-11")
    assert "is not an ISO-8601 instant" not in result.output


def test_show_query_shows_the_time_range_and_that_partial_results_are_refused(tmp_path: Path):
    result = _run("--es-url", NOWHERE, "search", "--user", "alice", "--since",
                  "2026-07-01T00:00:00Z", "--show-query", "x", home=tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert '"gte": "2026-07-01T00:00:00.000000000Z"' in result.output
    assert '"allow_partial_search_results": false' in result.output


def test_a_user_id_past_the_ingest_limit_is_refused_on_search_too(tmp_path: Path):
    result = _run("--es-url", NOWHERE, "search", "--user", "u" * 10_000, "--show-query", "x",
                  home=tmp_path)  # fmt: skip
    _refused(result, "10000 characters long; the limit is 512")
    assert "privilege" not in result.output


def test_a_disabled_cross_conversation_search_without_a_session_says_it_searches_nothing():
    result = _run("--es-url", NOWHERE, "search-conversations", "--user", "acme",
                  "--contact", "c-42", "--inbox", "web", "order")  # fmt: skip
    _refused(result, "disabled", "--enabled")


def test_a_json_array_file_gets_the_ndjson_hint(tmp_path: Path):
    source = tmp_path / "events.json"
    source.write_text('\ufeff[\n  {\n    "userId": "alice"\n  }\n]\n', encoding="utf-8")
    dead = tmp_path / "dead.ndjson"
    result = _run("--es-url", NOWHERE, "ingest", str(source), "--dead-letter", str(dead))
    _refused(result, "JSON array", "NDJSON", "jq -c '.[]'", "/v1/events")
    assert not dead.exists(), "nothing is read, so nothing is dead-lettered"


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["search", "--user", "a", "--index", "other", "q"], "--index"),
        (["node", "start", "--home", "/tmp"], "--home"),
        (["ingest", "f.ndjson", "--es-url=http://127.0.0.1:9200"], "--es-url"),
    ],
)
def test_a_global_option_after_the_command_is_told_where_it_goes(args: list[str], option: str):
    result = _run(*args)
    _refused(result, f"{option} is an option of session-recall itself", "before the command")
    assert "Did you mean" not in result.output


def test_the_help_names_each_environment_variable():
    top = " ".join(_run("--help").output.split())
    for variable in ("ELASTICSEARCH_URL", "ELASTICSEARCH_API_KEY", "ELASTICSEARCH_USERNAME",
                     "ELASTICSEARCH_PASSWORD", "ELASTICSEARCH_CA_CERTS", "SESSION_RECALL_INDEX",
                     "SESSION_RECALL_HOME"):  # fmt: skip
        assert f"env var: {variable}" in top
    assert "Exit codes" in top
    serve = " ".join(_run("serve", "--help").output.split())
    assert "SESSION_RECALL_TOKEN" in serve and "SESSION_RECALL_PORT" in serve


def test_every_option_of_every_command_is_described():
    import click

    def walk(command: click.Command, path: str) -> list[str]:
        missing = [
            f"{path} {param.opts[0]}"
            for param in command.params
            if isinstance(param, click.Option) and not param.help and param.opts[0] != "--help"
        ]
        for name, sub in getattr(command, "commands", {}).items():
            missing += walk(sub, f"{path} {name}")
        return missing

    assert walk(main, "session-recall") == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["search", "--user", "u", ", "], "has no word to search for"),
        (["memory-search", "--user", "u", ",,,"], "has no word to search for"),
        (["search-session", "--user", "u", "--session", "s", "x", "--page-size", "0"], "from 1 to"),
        (["search", "--user", "u", "x", "--since", "yesterday"], "yesterday"),
        (["memory-search", "--user", "u", "  "], "The query is empty"),
        (["memory-search", "--user", "u", "q", "--limit", "99"], "from 1 to 50"),
        (["memory-search", "--user", "u", "q", "--mode", "semantic", "--context", "-1"], "0 to 10"),
    ],
)
def test_search_arguments_are_checked_before_the_node_is_asked(args: list[str], says: str):
    """The node is down (nothing listens at NOWHERE): a wrong argument is still named as
    such, with the usage exit code, not reported as an unreachable node (exit 3)."""
    _refused(_run("--es-url", NOWHERE, *args), says)


@pytest.mark.parametrize("option", ["--dead-letter", "--checkpoint"])
def test_an_unwritable_output_path_is_named_before_the_node_is_asked(tmp_path: Path, option: str):
    events = tmp_path / "events.ndjson"
    events.write_text("{}\n")
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    result = _run("--es-url", NOWHERE, "ingest", str(events), option, str(blocked / "out"))
    _refused(result, "cannot be written", option)
