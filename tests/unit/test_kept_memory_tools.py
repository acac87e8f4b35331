"""The kept-memory tools without a node: their definitions in each framework's shape,
arguments refused before any request, and what the model reads."""

import json

import pytest
from jsonschema import Draft202012Validator

from session_recall.core.instant import Instant
from session_recall.core.kept_memories import MAX_SOURCES, MAX_STATEMENT_CHARS, Memory
from session_recall.indexer.enrichment.memories import MemoryWriter
from session_recall.recall import MemoriesSearcher, RecallItem
from session_recall.tools import (
    TOOLS,
    recall_memories_tool,
    render_items,
    render_recalled,
    retire_memory_tool,
    save_memory_tool,
    tool_definitions,
)
from tests.support.recording import RecordingClient

THOUGHT = "private: the user sounds annoyed"
KEPT = ["recall_memories", "save_memory", "retire_memory"]


@pytest.mark.parametrize(
    ("style", "schema_key"), [("openai", "parameters"), ("anthropic", "input_schema")]
)
def test_the_three_tools_are_defined_in_openai_and_anthropic_shapes(style, schema_key):
    definitions = tool_definitions(KEPT, style)
    for name, definition in zip(KEPT, definitions, strict=True):
        body = definition["function"] if style == "openai" else definition
        assert (
            body["name"] == name and "no argument can select another user" in (body["description"])
        )
        schema = body[schema_key]
        Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False
        assert not {"user", "userId", "contactId", "inboxId", "index"} & set(schema["properties"])
    [_, save, _] = definitions
    sources = (save["function"]["parameters"] if style == "openai" else save["input_schema"])[
        "properties"
    ]["sources"]
    assert (sources["minItems"], sources["maxItems"]) == (1, MAX_SOURCES)


def _tools() -> tuple[RecordingClient, dict]:
    client = RecordingClient()
    memories = MemoriesSearcher(client, user_id="alice", alias="a")  # type: ignore[arg-type]
    writer = MemoryWriter(client, "a", user_id="alice")  # type: ignore[arg-type]
    tools = [recall_memories_tool(memories), save_memory_tool(writer), retire_memory_tool(writer)]
    return client, {tool.name: tool for tool in tools}


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("recall_memories", {"query": "x", "kinds": ["gossip"]}, "kinds"),
        ("recall_memories", {"query": "x", "limit": 0}, "limit"),
        ("recall_memories", {"query": "x", "includeSuperseded": "yes"}, "includeSuperseded"),
        ("save_memory", {"statement": "x", "kind": "fact", "sources": []}, "sources"),
        (
            "save_memory",
            {"statement": "x", "kind": "fact", "sources": ["e"] * (MAX_SOURCES + 1)},
            "sources",
        ),
        ("save_memory", {"statement": "x", "kind": "rumour", "sources": ["e"]}, "kind"),
        (
            "save_memory",
            {"statement": "x" * (MAX_STATEMENT_CHARS + 1), "kind": "fact", "sources": ["e"]},
            "statement",
        ),
        ("save_memory", {"statement": "x", "kind": "fact", "sources": "e-1"}, "sources"),
        ("retire_memory", {"memoryId": "", "reason": "x"}, "memoryId"),
        ("retire_memory", {"memoryId": "m"}, "'reason' is required"),
    ],
)
def test_bad_arguments_are_refused_before_any_request(name, arguments, says):
    client, tools = _tools()
    result = tools[name].call({"innerThought": THOUGHT, **arguments})
    assert result.is_error and says in result.text, result.text
    assert THOUGHT not in result.text and len(result.text) < 500
    assert client.calls == []


def test_a_node_that_does_not_answer_gives_one_line_to_retry():
    _, tools = _tools()
    result = tools["save_memory"].call(
        {"innerThought": THOUGHT, "statement": "x", "kind": "fact", "sources": ["e"]}
    )
    assert result.is_error and "try again" in result.text and "Traceback" not in result.text


def _memory(**changes) -> Memory:
    fields = {
        "memory_id": "m1",
        "user_id": "alice",
        "kind": "decision",
        "statement": "Billing uses MySQL.",
        "sources": ["e-2"],
        "valid_from": Instant.parse("2026-07-08T10:00:00Z"),
        "origin": "agent",
        **changes,
    }
    return Memory.model_validate(fields)


def test_recalled_memories_read_as_the_cli_rows_without_the_user():
    text = render_recalled([_memory()], None)
    assert json.loads(text) == {
        "memories": [
            {
                "memoryId": "m1",
                "kind": "decision",
                "statement": "Billing uses MySQL.",
                "sources": ["e-2"],
                "validFrom": "2026-07-08T10:00:00Z",
                "supersededBy": None,
            }
        ]
    }
    assert "alice" not in text
    old = _memory(superseded_by="m2", valid_to=Instant.parse("2026-07-09T00:00:00Z"))
    [row] = json.loads(render_recalled([old], None))["memories"]
    assert (row["supersededBy"], row["validTo"]) == ("m2", "2026-07-09T00:00:00Z")
    assert render_recalled([], None) == "No results found."


def test_event_ids_are_in_the_rows_only_when_the_application_asks():
    item = RecallItem(
        session_id="s1", timestamp="2026-07-01T12:00:00Z", type="user_message", text="t",
        event_id="e-7",
    )  # fmt: skip
    assert "eventId" not in render_items([item])
    assert json.loads(render_items([item], with_event_id=True))[0]["eventId"] == "e-7"


def test_every_kept_tool_is_listed_with_the_others():
    assert set(KEPT) <= set(TOOLS)
