"""Agent tools over the recall engine: definitions, argument checking, reference output."""

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
    "memory_document",
    "memory_tool",
    "render_items",
    "render_memory",
    "tool_definitions",
]
