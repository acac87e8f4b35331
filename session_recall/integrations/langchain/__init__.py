"""LangChain on session-recall (the `langchain` extra: in the checkout,
`pip install -e '.[langchain]'`).

    from session_recall.integrations.langchain import SessionRecallRetriever
    retriever = SessionRecallRetriever(user_id="alice", k=5)
    docs = retriever.invoke("what did we decide about the database?")
    tool = create_retriever_tool(retriever, "recall", "Search this user's past sessions.")

The retriever is memory_search bound to one user when it is built: neither a query
nor a tool call can widen it.
"""

from session_recall.integrations.langchain.retriever import SessionRecallRetriever

__all__ = ["SessionRecallRetriever"]
