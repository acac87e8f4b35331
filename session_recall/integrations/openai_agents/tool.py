"""`memory_search_tool`: memory_search as an SDK `FunctionTool`, its scope bound in code.

The searcher is bound to one user when the application builds it; the model supplies
only what memory_search's definition offers (the query, time bounds, event types,
limit and context), never a user. A failed call (bad arguments, an unavailable node)
answers the model with one short line it can act on, as every tool of ours does.
"""

import asyncio
import json
from typing import Any

from agents import FunctionTool

from session_recall.recall import MemorySearcher
from session_recall.tools.bound_tool import memory_tool
from session_recall.tools.bounds import DEFAULT_BOUNDS, OutputBounds

BAD_JSON = 'The arguments are not a JSON object; send them as one, e.g. {"query": "..."}.'


def memory_search_tool(
    searcher: MemorySearcher,
    *,
    mode: str | None = None,
    bounds: OutputBounds = DEFAULT_BOUNDS,
) -> FunctionTool:
    """memory_search over `searcher`'s user, for an `Agent(tools=[...])`. `mode` is the
    application's choice (default: the searcher's, hybrid with an embedder); `bounds`
    how much text it answers with (`OutputBounds.of(settings)` for a deployment's own)."""
    bound = memory_tool(searcher, mode=mode, bounds=bounds)

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
        # Our schema has optional arguments, which the SDK's strict mode does not take.
        strict_json_schema=False,
    )
