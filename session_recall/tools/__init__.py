"""Agent tools over the recall engine: definitions, argument checking, reference output;
and the kept-memory tools (recall_memories, save_memory, retire_memory)."""

from session_recall.tools.bound_tool import (
    BoundTool,
    ToolArgumentError,
    ToolResult,
    conversation_tool,
    cross_conversation_tool,
    cross_session_tool,
    memory_tool,
)
from session_recall.tools.bounds import (
    DEFAULT_BOUNDS,
    OutputBounds,
    bounded_memory,
    bounded_page,
)
from session_recall.tools.definitions import STYLES, TOOLS, ToolSpec, tool_definitions
from session_recall.tools.kept_output import memory_row, render_recalled
from session_recall.tools.kept_tools import (
    kept_memory_tools,
    recall_memories_tool,
    retire_memory_tool,
    save_memory_tool,
)
from session_recall.tools.memory_output import memory_document, render_memory
from session_recall.tools.output import NO_RESULTS, render_items

__all__ = [
    "DEFAULT_BOUNDS",
    "NO_RESULTS",
    "STYLES",
    "TOOLS",
    "BoundTool",
    "OutputBounds",
    "ToolArgumentError",
    "ToolResult",
    "ToolSpec",
    "bounded_memory",
    "bounded_page",
    "conversation_tool",
    "cross_conversation_tool",
    "cross_session_tool",
    "kept_memory_tools",
    "memory_document",
    "memory_row",
    "memory_tool",
    "recall_memories_tool",
    "render_items",
    "render_memory",
    "render_recalled",
    "retire_memory_tool",
    "save_memory_tool",
    "tool_definitions",
]
