"""Our tools as LangChain `BaseTool`s, their scope bound when they are built.

    tools = kept_memory_tools(user_id="alice")   # recall_memories, save_memory, retire_memory
    agent = create_agent(model, tools=tools)

Each wraps a `BoundTool` (`session_recall.tools`): the tool's JSON Schema is the one
every framework gets, and the call is checked by the same models, so a model's
arguments never name a user. A failed call answers with one short line the model can
act on (LangChain passes the text on as the tool's output).
"""

import asyncio
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import ConfigDict, PrivateAttr

from session_recall.config import Settings
from session_recall.integrations.store import DEFAULT_TIMEOUT_S, EventStore
from session_recall.recall import required
from session_recall.tools import BoundTool
from session_recall.tools import kept_memory_tools as bound_kept_memory_tools
from session_recall.tools.bounds import OutputBounds


class SessionRecallTool(BaseTool):
    """One `BoundTool` as a LangChain tool. Built with `from_bound`; frozen, like the
    retriever: no assignment rebinds it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    _bound: BoundTool = PrivateAttr()

    @classmethod
    def from_bound(cls, bound: BoundTool) -> "SessionRecallTool":
        tool = cls(
            name=bound.name,
            description=bound.description,
            args_schema=bound.spec.json_schema(),
        )
        tool._bound = bound
        return tool

    def _run(self, *args: Any, run_manager: Any = None, **kwargs: Any) -> str:
        del run_manager
        # A JSON-schema tool gets its arguments as given; the bound tool checks them.
        return self._bound.call(kwargs).text

    async def _arun(self, *args: Any, run_manager: Any = None, **kwargs: Any) -> str:
        del run_manager
        return (await asyncio.to_thread(self._bound.call, kwargs)).text


def kept_memory_tools(
    user_id: str,
    *,
    contact_id: str | None = None,
    inbox_id: str | None = None,
    writes: bool = True,
    mode: str | None = None,
    settings: Settings | None = None,
    index: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    store: EventStore | None = None,
) -> list[SessionRecallTool]:
    """recall_memories (with the matching turns from memory_search when the model asks)
    over `user_id`'s kept memories and, unless `writes=False`, save_memory and
    retire_memory as that user. `contact_id`/`inbox_id` keep recall to the memories
    saved in that scope and save each memory in it; answers are bounded as the
    settings say (`SESSION_RECALL_TOOL_ANSWER_CHARS`...). `store` shares one client between
    many users' tools (it wins over `settings`, `index` and `timeout`)."""
    user = required("user_id", user_id)  # `InvalidScope` now, not at the first call
    store = store or EventStore(settings, index=index, timeout=timeout)
    writer = store.memory_writer(user, contact_id=contact_id, inbox_id=inbox_id) if writes else None
    bound = bound_kept_memory_tools(
        store.memories(user),
        writer,
        turns=store.memory(user),
        mode=mode,
        contact_id=contact_id,
        inbox_id=inbox_id,
        keywords=store.keyword_memories(user),
        bounds=OutputBounds.of(store.settings),
    )
    return [SessionRecallTool.from_bound(tool) for tool in bound]
