"""The OpenAI Agents SDK on session-recall (the `openai-agents` extra: in the checkout,
`pip install -e '.[openai-agents]'`).

    from session_recall.integrations.openai_agents import (
        SessionRecallSession,
        memory_search_tool,
    )
    session = SessionRecallSession("s-42", user_id="alice")
    agent = Agent(name="helper", tools=[memory_search_tool(session.memory())])
    await Runner.run(agent, "hello", session=session)

One store, three uses: the SDK's conversation history (`SessionRecallSession`, the SDK's
`Session` protocol); from the same events, `memory_search` (and `cross_session_search`)
over all of that user's sessions as tools whose scope is bound in code; and the user's
kept memories (`kept_memory_tools(session)`: recall_memories, save_memory,
retire_memory).
"""

# First, so that a missing framework is named with its extra (see `extras`).
from session_recall.integrations.extras import require

require("openai-agents", "agents", "The OpenAI Agents SDK (openai-agents)")

from session_recall.integrations.openai_agents.session import SessionRecallSession  # noqa: E402
from session_recall.integrations.openai_agents.tool import (  # noqa: E402
    cross_session_search_tool,
    function_tool,
    kept_memory_tools,
    memory_search_tool,
    recall_memories_tool,
    retire_memory_tool,
    save_memory_tool,
)

__all__ = [
    "SessionRecallSession",
    "cross_session_search_tool",
    "function_tool",
    "kept_memory_tools",
    "memory_search_tool",
    "recall_memories_tool",
    "retire_memory_tool",
    "save_memory_tool",
]
