"""LangChain on session-recall (the `langchain` extra: in the checkout,
`pip install -e '.[langchain]'`).

    from session_recall.integrations.langchain import SessionRecallRetriever
    retriever = SessionRecallRetriever(user_id="alice", k=5)
    docs = retriever.invoke("what did we decide about the database?")
    tool = create_retriever_tool(retriever, "recall", "Search this user's past sessions.")

The retriever is memory_search bound to one user when it is built: neither a query
nor a tool call can widen it. `kept_memory_tools(user_id="alice")` gives the user's
kept-memory tools (recall_memories, save_memory, retire_memory), bound the same way.
"""

# First, so that a missing framework is named with its extra (see `extras`).
from session_recall.integrations.extras import require

require("langchain", "langchain_core", "LangChain (langchain-core)")

from session_recall.integrations.langchain.retriever import SessionRecallRetriever  # noqa: E402
from session_recall.integrations.langchain.tools import (  # noqa: E402
    SessionRecallTool,
    kept_memory_tools,
)

__all__ = ["SessionRecallRetriever", "SessionRecallTool", "kept_memory_tools"]
