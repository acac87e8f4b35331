"""Our tools as SDK `FunctionTool`s, their scope bound in code.

Each wraps a `BoundTool` (`session_recall.tools`): the searcher or writer under it is
bound to one user when the application builds it; the model supplies only what the
tool's definition offers, never a user. A failed call (bad arguments, an unavailable
node, a source that is not the user's) answers the model with one short line it can
act on, as every tool of ours does.

- `memory_search_tool(searcher)`: memory_search over the searcher's user;
- `cross_session_search_tool(searcher)`: cross_session_search, for a background agent
  that mines a user's history (with `since`, only what is new);
- `kept_memory_tools(session)`: recall_memories, save_memory and retire_memory for
  the session's user (or `recall_memories_tool`, `save_memory_tool`,
  `retire_memory_tool` one by one).
"""

import asyncio
import json
from typing import TYPE_CHECKING, Any

from agents import FunctionTool

from session_recall.indexer import MemoryWriter
from session_recall.recall import CrossSessionSearcher, MemoriesSearcher, MemorySearcher
from session_recall.tools import BoundTool, cross_session_tool, kept_tools, memory_tool
from session_recall.tools.bounds import DEFAULT_BOUNDS, OutputBounds

if TYPE_CHECKING:
    from session_recall.integrations.openai_agents.session import SessionRecallSession

BAD_JSON = 'The arguments are not a JSON object; send them as one, e.g. {"query": "..."}.'


def function_tool(bound: BoundTool) -> FunctionTool:
    """`bound` as an SDK tool: its name, description and schema, its call off the
    event loop."""

    async def invoke(_context: Any, arguments: str) -> str:
        try:
            parsed = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return BAD_JSON
        if not isinstance(parsed, dict):
            return BAD_JSON
        return (await asyncio.to_thread(bound.call, parsed)).text

    return FunctionTool(
        name=bound.spec.name,
        description=bound.description,
        params_json_schema=bound.spec.json_schema(),
        on_invoke_tool=invoke,
        # Our schemas have optional arguments, which the SDK's strict mode does not take.
        strict_json_schema=False,
    )


def memory_search_tool(
    searcher: MemorySearcher,
    *,
    mode: str | None = None,
    bounds: OutputBounds = DEFAULT_BOUNDS,
    event_ids: bool = False,
) -> FunctionTool:
    """memory_search over `searcher`'s user, for an `Agent(tools=[...])`. `mode` is the
    application's choice (default: the searcher's, hybrid with an embedder); `bounds`
    how much text it answers with (`OutputBounds.of(settings)` for a deployment's own);
    `event_ids` adds each hit's eventId, for an agent that saves memories."""
    return function_tool(memory_tool(searcher, mode=mode, bounds=bounds, event_ids=event_ids))


def cross_session_search_tool(
    searcher: CrossSessionSearcher,
    *,
    bounds: OutputBounds = DEFAULT_BOUNDS,
    event_ids: bool = False,
) -> FunctionTool:
    """cross_session_search over every session of `searcher`'s user; `event_ids` adds
    each event's eventId to its row, which save_memory takes as a source (a background
    agent that mines the history with `since` and saves what it concludes)."""
    return function_tool(cross_session_tool(searcher, bounds=bounds, event_ids=event_ids))


def recall_memories_tool(
    memories: MemoriesSearcher,
    *,
    turns: MemorySearcher | None = None,
    mode: str | None = None,
    keywords: MemoriesSearcher | None = None,
    bounds: OutputBounds = DEFAULT_BOUNDS,
) -> FunctionTool:
    """recall_memories over `memories`' user; `turns` (memory_search of the same user)
    answers a request for the matching turns; `keywords` (the same user's memories
    without an embedder) is searched when the query cannot be embedded."""
    return function_tool(
        kept_tools.recall_memories_tool(
            memories, turns=turns, mode=mode, keywords=keywords, bounds=bounds
        )
    )


def save_memory_tool(writer: MemoryWriter) -> FunctionTool:
    return function_tool(kept_tools.save_memory_tool(writer))


def retire_memory_tool(writer: MemoryWriter) -> FunctionTool:
    return function_tool(kept_tools.retire_memory_tool(writer))


def kept_memory_tools(
    session: "SessionRecallSession",
    *,
    writes: bool = True,
    mode: str | None = None,
    bounds: OutputBounds = DEFAULT_BOUNDS,
) -> list[FunctionTool]:
    """recall_memories (with its turns from memory_search) for `session`'s user, and
    unless `writes=False`, save_memory and retire_memory as that user."""
    memories, turns = session.memories(), session.memory()
    keywords = session.memories(keywords_only=True)
    tools = [
        recall_memories_tool(memories, turns=turns, mode=mode, keywords=keywords, bounds=bounds)
    ]
    if writes:
        writer = session.memory_writer()
        tools += [save_memory_tool(writer), retire_memory_tool(writer)]
    return tools
