"""The agent tools end to end: a loop replaying tool calls as a model sends them, scope
that no argument can widen, and innerThought kept out of every output and log line."""

import json
import logging

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.recall import CrossConversationSearcher, CrossConversationSettings, Searchers
from session_recall.tools import (
    conversation_tool,
    cross_conversation_tool,
    cross_session_tool,
)
from session_recall.tools.searchers import searchers_for
from tests.support.samples import BOB_WORDS, BOTH, DECIDED, GO_WITH, SAMPLE, THOUGHT

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def sample_settings(es_url: str, module_alias: str, tmp_path_factory) -> Settings:
    home = tmp_path_factory.mktemp("home")
    args = ["--es-url", es_url, "--index", module_alias, "--home", str(home)]
    result = CliRunner().invoke(main, [*args, "ingest", str(SAMPLE)])
    assert result.exit_code == 0, result.output
    Elasticsearch(es_url).indices.refresh(index=module_alias)
    return Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=module_alias, SESSION_RECALL_HOME=home
    )


@pytest.fixture(scope="module")
def searchers(es: Elasticsearch, sample_settings: Settings) -> Searchers:
    return searchers_for(es, sample_settings)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"query": "we decided, let's go with"}, f"[{DECIDED},{GO_WITH},{BOTH}]"),
        ({"query": "We Decided , LET'S GO WITH", "matchMode": "all"}, f"[{BOTH}]"),
        ({"query": "we decided", "since": "2026-07-01T00:00:00Z"}, f"[{BOTH}]"),
        ({"query": "we decided", "since": "2026-07-02T10:03:00+02:00"}, f"[{BOTH}]"),
        ({"query": "we decided", "page": 1}, "No results found."),
        ({"query": BOB_WORDS}, "No results found."),
    ],
)
def test_an_agent_loop_gets_the_reference_outputs(searchers: Searchers, arguments, expected):
    tool = cross_session_tool(searchers.cross_session(user_id="alice"))
    result = tool.call({"innerThought": THOUGHT, **arguments})
    assert result.text == expected and not result.is_error


@pytest.mark.parametrize(("page", "says"), [("1", "valid integer"), (True, "valid integer")])
def test_a_page_that_is_not_a_page_number_is_refused_not_guessed(
    searchers: Searchers, page: object, says: str
):
    """Unlike the reference tools, which read "1" as 1: a model that sends a string is
    told so rather than shown another page. (A negative page is the first, as the
    reference contract says: `test_hostile_surfaces`.)"""
    tool = cross_session_tool(searchers.cross_session(user_id="alice"))
    result = tool.call({"innerThought": THOUGHT, "query": "we decided", "page": page})
    assert result.is_error and says in result.text, result.text


def test_conversation_search_leaves_out_the_session(searchers: Searchers):
    tool = conversation_tool(searchers.conversation(user_id="alice", session_id="s-trip"))
    assert tool.call({"innerThought": THOUGHT, "query": "Lisbon"}).text == (
        '[{"timestamp":"2026-06-03T09:15:02.250Z","type":"assistant_message",'
        '"text":"Happy to help. Lisbon and Porto both fit your budget."},'
        '{"timestamp":"2026-06-03T09:16:40Z","type":"user_message",'
        '"text":"We decided on Lisbon, the flights are cheaper."},'
        '{"timestamp":"2026-06-03T09:16:41.500Z","type":"tool_call",'
        "\"text\":\"calendar.create(title='Offsite Lisbon', month='September')\"}]"
    )


@pytest.mark.parametrize(
    ("user_id", "expected"),
    [
        # Pinned to the tenant: globex's customer with the same ids stays out.
        ("acme", ["conv-101", "conv-102"]),
        ("globex", ["conv-901"]),
    ],
)
def test_cross_conversation_search_keeps_to_the_user_contact_and_inbox(
    es: Elasticsearch, sample_settings: Settings, searchers: Searchers, user_id, expected
):
    searcher = CrossConversationSearcher(
        es,
        alias=sample_settings.index,
        contact_id="c-42",
        inbox_id="web",
        user_id=user_id,
        settings=CrossConversationSettings(enabled=True, lookback_days=90),
        cursor_key=searchers.cursor_key,
        now=lambda: Instant.parse("2026-07-15T00:00:00Z"),
    )
    tool = cross_conversation_tool(searcher, current_session_id="conv-102")
    output = tool.call({"innerThought": THOUGHT, "query": "order 7731"}).text
    # The playground conversation (conv-103), the email inbox (conv-201) and contact
    # c-77 (conv-301) stay out either way.
    sessions = ("conv-101", "conv-102", "conv-103", "conv-201", "conv-301", "conv-901")
    assert [s for s in sessions if s in output] == expected


SCOPE_KEYS = ["user", "userId", "user_id", "sessionId", "session_id", "index", "alias",
              "contactId", "inboxId", "routing", "scope"]  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(
    extra=st.dictionaries(
        st.one_of(st.sampled_from(SCOPE_KEYS), st.text(min_size=1, max_size=12)),
        st.one_of(st.just("bob"), st.text(max_size=10), st.integers(), st.none()),
        min_size=1,
        max_size=3,
    ),
    query=st.sampled_from(["we decided", BOB_WORDS, "launch", "Friday, Lisbon"]),
)
# Drawn in a full test run: a known argument's bad value is named first.
@example(extra={"user": "bob", "matchMode": "bob"}, query="we decided")
def test_extra_arguments_never_widen_the_scope(searchers: Searchers, extra, query):
    tool = cross_session_tool(searchers.cross_session(user_id="alice"))
    arguments = {**extra, "innerThought": THOUGHT, "query": query}
    result = tool.call(arguments)
    assert "Friday" not in result.text and "s-bob" not in result.text
    unknown = set(extra) - {"innerThought", "query", "matchMode", "since", "page"}
    # Each unknown argument is named, beside whatever else is wrong (a known argument
    # given a bad value, say).
    for key in unknown:
        assert result.is_error and f"unknown argument '{key}'" in result.text, result.text


def test_inner_thought_appears_in_no_output_and_no_log_line(
    searchers: Searchers, caplog: pytest.LogCaptureFixture
):
    tool = cross_session_tool(searchers.cross_session(user_id="alice"))
    calls = [
        {"query": "we decided"},
        {"query": ","},
        {"query": "x", "userId": "bob"},
        {"query": "x", "since": "yesterday"},
        {"query": "x", "page": "many"},
    ]
    with caplog.at_level(logging.DEBUG):
        outputs = [tool.call({"innerThought": THOUGHT, **call}).text for call in calls]
    assert caplog.records, "the DEBUG capture saw no log line at all"
    # The call's own line is written at DEBUG, with the arguments but the thought.
    assert any("we decided" in record.getMessage() for record in caplog.records)
    assert all(THOUGHT not in output for output in outputs)
    assert THOUGHT not in caplog.text
    assert all(THOUGHT not in str(record.args) for record in caplog.records)


def test_the_cli_prints_the_tool_output_and_the_typed_page(sample_settings: Settings):
    args = ["--es-url", sample_settings.elasticsearch_url, "--index", sample_settings.index,
            "--home", str(sample_settings.home)]  # fmt: skip
    runner = CliRunner()
    tool = runner.invoke(main, [*args, "search", "--user", "alice", "we decided, let's go with"])
    assert tool.exit_code == 0, tool.output
    assert tool.output.strip() == f"[{DECIDED},{GO_WITH},{BOTH}]"

    first = runner.invoke(
        main, [*args, "search", "--user", "alice", "--page-size", "2", "--format", "json",
               "we decided, let's go with"],
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    page = json.loads(first.output)
    assert [i["session_id"] for i in page["items"]] == ["s-trip", "s-stack"]
    rest = runner.invoke(
        main, [*args, "search", "--user", "alice", "--page-size", "2", "--format", "json",
               "--cursor", page["next_cursor"], "we decided, let's go with"],
    )  # fmt: skip
    assert rest.exit_code == 0, rest.output
    assert [i["session_id"] for i in json.loads(rest.output)["items"]] == ["s-notes"]

    bad = runner.invoke(main, [*args, "search", "--user", "alice", ", "])
    assert bad.exit_code == 2
    assert "has no word to search for" in bad.output


def test_a_disabled_cross_conversation_search_says_so_on_stderr(sample_settings: Settings):
    args = ["--es-url", sample_settings.elasticsearch_url, "--index", sample_settings.index,
            "--home", str(sample_settings.home), "search-conversations", "--contact", "c-42",
            "--inbox", "web", "--user", "acme", "--current-session", "conv-102",
            "order 7731"]  # fmt: skip
    disabled = CliRunner().invoke(main, args)
    enabled = CliRunner().invoke(main, [*args, "--enabled", "--lookback-days", "365"])
    assert disabled.exit_code == 0 and enabled.exit_code == 0, disabled.output + enabled.output
    assert "disabled" in disabled.stderr and "--enabled" in disabled.stderr
    assert "conv-102" in disabled.stdout and "conv-101" not in disabled.stdout
    assert disabled.stdout.startswith("[")  # the tool output itself stays what a model reads
    assert enabled.stderr == "" and "conv-101" in enabled.stdout
