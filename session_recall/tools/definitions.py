"""Tool definitions (name, description, JSON Schema), generated from the argument models.

`tool_definitions(names, style)` renders them in the shapes agent frameworks take:
OpenAI-style function calling, Anthropic tool use, and MCP. Each description states the
bounds the tool answers within (`tools.bounds`).
"""

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from session_recall.tools.arguments import (
    ConversationSearchArguments,
    CrossConversationSearchArguments,
    CrossSessionSearchArguments,
    MemorySearchArguments,
    RecallMemoriesArguments,
    RetireMemoryArguments,
    SaveMemoryArguments,
)
from session_recall.tools.bounds import DEFAULT_BOUNDS, OutputBounds

Style = Literal["openai", "anthropic", "mcp"]
STYLES: tuple[Style, ...] = ("openai", "anthropic", "mcp")

_SYNTAX = (
    " Terms match whole words or exact phrases, ignoring case; there are no wildcards and no "
    "regular expressions."
)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    arguments: type[BaseModel]

    def describe(self, bounds: OutputBounds = DEFAULT_BOUNDS) -> str:
        """The description a model reads: what the tool does, and its answer's bounds."""
        return self.description + bounds.note()

    def json_schema(self) -> dict[str, Any]:
        schema = self.arguments.model_json_schema(by_alias=True)
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema["additionalProperties"] = False
        return schema


CROSS_SESSION_SEARCH = ToolSpec(
    name="cross_session_search",
    description=(
        "Search across ALL of a user's sessions (not just the current one) for events matching "
        "the given criteria. Intended for maintenance/analysis agents that need historical signal "
        "spanning many past conversations, not for use by a live conversational agent (which "
        "should prefer conversation_search). Returns paginated results ordered chronologically."
        + _SYNTAX
        + " The user is fixed by the application: no argument can select another user."
    ),
    arguments=CrossSessionSearchArguments,
)

CONVERSATION_SEARCH = ToolSpec(
    name="conversation_search",
    description=(
        "Search the full prior conversation history using case-insensitive keyword matching. "
        "Returns paginated results ordered chronologically."
        + _SYNTAX
        + " Only the current conversation is searched; the application chooses it."
    ),
    arguments=ConversationSearchArguments,
)

CROSS_CONVERSATION_SEARCH = ToolSpec(
    name="cross_conversation_search",
    description=(
        "Search this customer's recent conversations in this inbox, including the current one, "
        "for messages matching the given criteria: use it to recall what the customer said or "
        "was told in earlier conversations. Returns paginated results ordered chronologically."
        + _SYNTAX
        + " The customer, the inbox and the account they belong to are fixed by the "
        "application: no argument can select another."
    ),
    arguments=CrossConversationSearchArguments,
)

MEMORY_SEARCH = ToolSpec(
    name="memory_search",
    description=(
        "Recall what was said or done in ANY of this user's past sessions that answers a "
        "natural-language question, e.g. 'what did we decide about the database?'. Finds "
        "events by meaning as well as by words, so the query need not repeat their wording. "
        "Returns the most relevant events first, each with the events just before and after "
        "it in its session, so you can read it in context."
        " The user is fixed by the application: no argument can select another user."
    ),
    arguments=MemorySearchArguments,
)

_KEPT = (
    " Kept memories are what was concluded from this user's past turns (decisions, "
    "corrections, instructions, preferences, facts), each naming the turns it came from."
)
_SCOPE = " The user is fixed by the application: no argument can select another user."

RECALL_MEMORIES = ToolSpec(
    name="recall_memories",
    description=(
        "Recall what is already known about this user: the kept memories that answer a "
        "question, e.g. 'which database do we use for billing?', most relevant first, "
        "current ones only unless includeSuperseded is set. Set turns to also get the user's "
        "past turns that match, after the memories." + _KEPT + _SCOPE
    ),
    arguments=RecallMemoriesArguments,
)

SAVE_MEMORY = ToolSpec(
    name="save_memory",
    description=(
        "Keep a memory about this user: a decision, correction, instruction, preference or "
        "fact, stated short and standalone, with the ids of the events it comes from (found "
        "with cross_session_search). Name in supersedes the memory it replaces, which is then "
        "kept as history. Returns the new memory's memoryId." + _SCOPE
    ),
    arguments=SaveMemoryArguments,
)

RETIRE_MEMORY = ToolSpec(
    name="retire_memory",
    description=(
        "Retire a kept memory of this user that no longer holds and has no replacement "
        "(to replace it, call save_memory with supersedes instead). It stays as history, "
        "with the reason." + _SCOPE
    ),
    arguments=RetireMemoryArguments,
)

TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        CROSS_SESSION_SEARCH,
        CONVERSATION_SEARCH,
        CROSS_CONVERSATION_SEARCH,
        MEMORY_SEARCH,
        RECALL_MEMORIES,
        SAVE_MEMORY,
        RETIRE_MEMORY,
    )
}


def render_definition(
    spec: ToolSpec, style: Style, bounds: OutputBounds = DEFAULT_BOUNDS
) -> dict[str, Any]:
    schema, description = spec.json_schema(), spec.describe(bounds)
    if style == "openai":
        return {
            "type": "function",
            "function": {"name": spec.name, "description": description, "parameters": schema},
        }
    if style == "anthropic":
        return {"name": spec.name, "description": description, "input_schema": schema}
    return {"name": spec.name, "description": description, "inputSchema": schema}


def tool_definitions(
    names: list[str] | None = None,
    style: Style = "openai",
    bounds: OutputBounds = DEFAULT_BOUNDS,
) -> list[dict[str, Any]]:
    return [render_definition(TOOLS[name], style, bounds) for name in (names or list(TOOLS))]
