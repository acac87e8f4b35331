"""The OpenAI Agents SDK on session-recall (the `openai-agents` extra: in the checkout,
`pip install -e '.[openai-agents]'`).

    from session_recall.integrations.openai_agents import (
        SessionRecallSession,
        memory_search_tool,
    )
    session = SessionRecallSession("s-42", user_id="alice")
    agent = Agent(name="helper", tools=[memory_search_tool(session.memory())])
    await Runner.run(agent, "hello", session=session)

One store, two uses: the SDK's conversation history (`SessionRecallSession`, the SDK's
`Session` protocol), and, from the same events, `memory_search` over all of that
user's sessions as a tool whose scope is bound in code.
"""

# First, so that a missing framework is named with its extra (see `extras`).
from session_recall.integrations.extras import require

require("openai-agents", "agents", "The OpenAI Agents SDK (openai-agents)")

from session_recall.integrations.openai_agents.session import SessionRecallSession  # noqa: E402
from session_recall.integrations.openai_agents.tool import memory_search_tool  # noqa: E402

__all__ = ["SessionRecallSession", "memory_search_tool"]
