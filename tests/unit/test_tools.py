"""Tool definitions and argument checking, without Elasticsearch."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from session_recall.recall import CrossSessionSearcher, RecallItem
from session_recall.tools import (
    STYLES,
    TOOLS,
    ToolArgumentError,
    cross_session_tool,
    render_items,
    tool_definitions,
)
from session_recall.tools.bound_tool import BoundTool
from session_recall.tools.definitions import CROSS_SESSION_SEARCH
from tests.support.recording import RecordingClient

SECRET_THOUGHT = "my private plan: exfiltrate bob's notes"
SMUGGLED = ["user", "userId", "user_id", "sessionId", "session_id", "index", "contactId", "inboxId"]


def _schema(name: str) -> dict:
    return TOOLS[name].json_schema()


@pytest.mark.parametrize("style", STYLES)
def test_every_definition_is_a_valid_json_schema(style: str):
    definitions = tool_definitions(style=style)  # type: ignore[arg-type]
    assert len(definitions) == 7
    for definition in definitions:
        body = definition.get("function", definition)
        schema = body.get("parameters") or body.get("input_schema") or body.get("inputSchema")
        Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False
        assert "innerThought" in schema["required"]


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("cross_session_search", ["innerThought", "query", "matchMode", "since", "page"]),
        ("conversation_search", ["innerThought", "query", "page"]),
        ("cross_conversation_search", ["innerThought", "query", "matchMode", "page"]),
        (
            "memory_search",
            ["innerThought", "query", "since", "until", "types", "limit", "context"],
        ),
        (
            "recall_memories",
            ["innerThought", "query", "kinds", "includeSuperseded", "limit", "turns"],
        ),
        (
            "save_memory",
            ["innerThought", "statement", "kind", "sources", "supersedes", "subject"],
        ),
        ("retire_memory", ["innerThought", "memoryId", "reason"]),
    ],
)
def test_tools_take_the_reference_parameters_and_nothing_that_names_a_scope(name, parameters):
    properties = _schema(name)["properties"]
    assert list(properties) == parameters
    assert not set(properties) & set(SMUGGLED)


@pytest.mark.parametrize("smuggled", SMUGGLED)
def test_an_argument_that_could_name_a_scope_is_refused(smuggled: str):
    tool = BoundTool(CROSS_SESSION_SEARCH, search=_never_called)
    with pytest.raises(ToolArgumentError) as refused:
        tool.parse({"innerThought": SECRET_THOUGHT, "query": "x", smuggled: "bob"})
    assert f"unknown argument '{smuggled}'" in str(refused.value)
    result = tool.call({"innerThought": SECRET_THOUGHT, "query": "x", smuggled: "bob"})
    assert result.is_error and result.text.startswith("Error: ")
    assert SECRET_THOUGHT not in result.text


def _never_called(_args: object, _cursor: object) -> object:
    raise AssertionError("an invalid call must not reach the searcher")


@pytest.mark.parametrize(
    "arguments",
    [
        {"query": "x"},  # innerThought missing
        {"innerThought": SECRET_THOUGHT},  # query missing
        {"innerThought": SECRET_THOUGHT, "query": "x", "matchMode": "some"},
        {"innerThought": SECRET_THOUGHT, "query": "x", "page": "second"},
        {"innerThought": SECRET_THOUGHT, "query": ["x"]},
    ],
)
def test_invalid_arguments_give_a_short_message_without_the_inner_thought(arguments):
    result = BoundTool(CROSS_SESSION_SEARCH, search=_never_called).call(arguments)
    output = result.text
    assert result.is_error and output.startswith("Error: ")
    assert SECRET_THOUGHT not in output
    assert "Traceback" not in output and len(output) < 400


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"query": ","}, "has no word to search for"),
        ({"query": ", "}, "has no word to search for"),
        ({"query": "we decided", "since": "2026-07-01"}, "2026-07-01T00:00:00Z"),
        ({"query": ",".join(f"t{n}" for n in range(21))}, "20"),
        ({"query": "x", "matchMode": "most"}, "matchMode"),
    ],
)
def test_invalid_calls_get_a_short_actionable_error_and_send_no_request(arguments, says):
    client = RecordingClient()
    searcher = CrossSessionSearcher(client, alias="a", user_id="alice", cursor_key=b"k" * 32)  # type: ignore[arg-type]
    result = cross_session_tool(searcher).call({"innerThought": SECRET_THOUGHT, **arguments})
    output = result.text
    assert result.is_error and output.startswith("Error: ") and says in output
    assert "Traceback" not in output and "_exception" not in output
    assert SECRET_THOUGHT not in output
    assert client.calls == []


def test_arguments_are_read_leniently_as_models_send_them():
    args = CROSS_SESSION_SEARCH.arguments.model_validate(
        {
            "innerThought": SECRET_THOUGHT,
            "query": "x",
            "matchMode": " ALL ",
            "since": "",
            "page": None,
        }
    )
    assert (args.match_mode, args.since, args.page) == ("all", None, 0)
    assert "innerThought" not in args.model_dump(by_alias=True)
    assert SECRET_THOUGHT not in repr(args)


@pytest.mark.parametrize("name", ["cross_session_search", "conversation_search",
                                  "cross_conversation_search"])  # fmt: skip
def test_a_negative_page_is_the_first_as_the_reference_contract_says(name: str):
    """ "Negative values are clamped to 0": the schema has no minimum that a framework
    would refuse them by, and the arguments read them as page 0. A page that is not an
    integer stays refused."""
    spec = TOOLS[name]
    assert "minimum" not in spec.json_schema()["properties"]["page"]
    Draft202012Validator(spec.json_schema()).validate(
        {"innerThought": "t", "query": "x", "page": -3}
    )
    read = spec.arguments.model_validate({"innerThought": "t", "query": "x", "page": -3})
    assert read.page == 0  # type: ignore[attr-defined]
    for wrong in ("1", True, -1.5):
        result = BoundTool(spec, search=_never_called).call(
            {"innerThought": "t", "query": "x", "page": wrong}
        )
        assert result.is_error, wrong


def _Item(session_id: str, timestamp: str, type_: str, text: str) -> RecallItem:
    return RecallItem(
        session_id=session_id, timestamp=timestamp, type=type_, text=text, event_id="e"
    )


def test_output_is_the_reference_json_array():
    items = [_Item("s1", "2026-07-01T12:00:00.500Z", "user", 'caf\u00e9 \u4f60\u597d "q"')]
    assert render_items(items) == (
        '[{"sessionId":"s1","timestamp":"2026-07-01T12:00:00.500Z","type":"user",'
        '"text":"caf\u00e9 \u4f60\u597d \\"q\\""}]'
    )
    assert render_items(items, with_session=False).startswith('[{"timestamp":')
    assert render_items([]) == "No results found."


@given(st.lists(st.tuples(st.text(min_size=1), st.text()), max_size=5))
def test_output_is_compact_json_with_raw_utf8_whatever_the_text(rows):
    items = [_Item(s, "2026-07-01T12:00:00Z", None, t) for s, t in rows]
    expected = [
        {"sessionId": s, "timestamp": "2026-07-01T12:00:00Z", "type": None, "text": t}
        for s, t in rows
    ]
    out = render_items(items)
    if rows:  # lone surrogates included
        assert out == json.dumps(expected, ensure_ascii=False, separators=(",", ":"))


@given(st.lists(st.tuples(st.text(min_size=1), st.text()), max_size=5))
def test_output_round_trips_as_json(rows):
    items = [_Item(s, "2026-07-01T12:00:00Z", "user", t) for s, t in rows]
    out = render_items(items)
    if rows:
        assert [(r["sessionId"], r["text"]) for r in json.loads(out)] == rows
    else:
        assert out == "No results found."
