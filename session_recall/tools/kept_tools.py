"""The kept-memory tools, bound to their scope when the application builds them.

- `recall_memories_tool`: the user's kept memories that answer a question, current
  ones first (history only when asked), then, when the model asks for `turns`, the
  user's past turns that match (memory_search, each hit with its neighbours);
- `save_memory_tool` and `retire_memory_tool`: write through the store's
  `MemoryWriter`, which checks every source is an event of the user.

The user is the one the searcher and the writer were built for; a contact and an
inbox, when the application binds them (`contact_id`/`inbox_id`), keep recall to the
memories saved in that scope, and every memory saved through the tool is saved in
it. No argument names a user, a contact or an inbox (`extra="forbid"`).
"""

from dataclasses import replace

from pydantic import BaseModel, ConfigDict

from session_recall.core.echo import cut
from session_recall.core.errors import ConfigurationError
from session_recall.core.kept_memories import Memory
from session_recall.indexer.enrichment.memories import MemoryWriter, SavedMemory
from session_recall.recall import (
    MAX_MEMORY_LIMIT,
    MemoriesSearcher,
    MemorySearcher,
    MemorySearchResult,
)
from session_recall.tools.arguments import (
    RecallMemoriesArguments,
    RetireMemoryArguments,
    SaveMemoryArguments,
)
from session_recall.tools.bound_tool import BoundTool
from session_recall.tools.bounds import (
    DEFAULT_BOUNDS,
    ROW_CHARS,
    OutputBounds,
    bounded_memory,
    share,
)
from session_recall.tools.definitions import RECALL_MEMORIES, RETIRE_MEMORY, SAVE_MEMORY
from session_recall.tools.kept_output import render_recalled, render_retired, render_saved

WRITE_UNAVAILABLE = "The memory store is unavailable right now; try again in a moment."
# Turns beneath the memories show the one turn before and after each, as memory_search's
# default does: enough to read a turn in context, and the output stays bounded.
_TURN_CONTEXT = 1


class RecalledMemories(BaseModel):
    """recall_memories' result: the memories, and the turns when they were asked for;
    the typed answer of its endpoint (`?format=page`) as the other tools' pages are."""

    model_config = ConfigDict(frozen=True)

    memories: list[Memory]
    turns: MemorySearchResult | None


def _bounded(found: list[Memory], bounds: OutputBounds) -> tuple[list[Memory], OutputBounds]:
    """The memories with their statements within `bounds` (as the events' texts of an
    answer: the long ones share what the short ones leave), and the bounds left for the
    turns beneath them."""
    limit = share([len(m.statement) for m in found], bounds, rest=ROW_CHARS * len(found))
    kept = [
        m
        if len(m.statement) <= limit
        else m.model_copy(update={"statement": cut(m.statement, limit)})
        for m in found
    ]
    used = sum(len(m.statement) + ROW_CHARS for m in kept)
    return kept, replace(bounds, answer_chars=max(0, bounds.answer_chars - used))


def _in_scope(memory: Memory, contact_id: str | None, inbox_id: str | None) -> bool:
    return (contact_id is None or memory.contact_id == contact_id) and (
        inbox_id is None or memory.inbox_id == inbox_id
    )


def recall_memories_tool(
    memories: MemoriesSearcher,
    *,
    turns: MemorySearcher | None = None,
    mode: str | None = None,
    contact_id: str | None = None,
    inbox_id: str | None = None,
    keywords: MemoriesSearcher | None = None,
    bounds: OutputBounds = DEFAULT_BOUNDS,
) -> BoundTool:
    """recall_memories over `memories`' user. `turns` answers a request for turns (the
    same user's memory_search; without it, none are given); `mode` is its search mode;
    `contact_id`/`inbox_id` keep recall to the memories saved in that scope.
    `keywords`: the same user's memories without an embedder, searched when the query
    cannot be embedded for a reason `memories` does not fall back on itself (a local
    model not installed), as memory_search then runs on keywords. `bounds`: how much
    text the answer holds, the statements and the turns' texts together (`tools.bounds`)."""
    scoped = contact_id is not None or inbox_id is not None

    def find(args: RecallMemoriesArguments, limit: int) -> list[Memory]:
        def search(searcher: MemoriesSearcher) -> list[Memory]:
            return searcher.search(
                args.query, kinds=args.kinds, include_superseded=args.include_superseded,
                limit=limit,
            ).memories  # fmt: skip

        try:
            return search(memories)
        except ConfigurationError:
            if keywords is None:
                raise
            return search(keywords)

    def search(args: RecallMemoriesArguments, _cursor: str | None) -> RecalledMemories:
        # A scoped tool reads the most it may and keeps its scope's: the memories index
        # is per user, and a contact's share of one user's memories is small.
        found = find(args, MAX_MEMORY_LIMIT if scoped else args.limit)
        if scoped:
            found = [m for m in found if _in_scope(m, contact_id, inbox_id)][: args.limit]
        found, left = _bounded(found, bounds)
        hits = None
        if args.turns and turns is not None:
            hits = turns.search(args.query, mode=mode, limit=args.turns, context=_TURN_CONTEXT)
            hits = bounded_memory(hits, left)
        return RecalledMemories(memories=found, turns=hits)

    def render(result: RecalledMemories) -> str:
        return render_recalled(result.memories, result.turns)

    return BoundTool(RECALL_MEMORIES, search, renderer=render, bounds=bounds)


def save_memory_tool(writer: MemoryWriter) -> BoundTool:
    """save_memory as `writer`'s user (and the contact and inbox it was built with)."""

    def save(args: SaveMemoryArguments, _cursor: str | None) -> SavedMemory:
        return writer.save_memory(
            args.statement,
            args.kind,
            list(args.sources),
            supersedes=args.supersedes,
            subject=args.subject,
        )

    def render(saved: SavedMemory) -> str:
        return render_saved(saved.memory, created=saved.created, superseded=saved.superseded)

    return BoundTool(SAVE_MEMORY, save, renderer=render, unavailable=WRITE_UNAVAILABLE)


def retire_memory_tool(writer: MemoryWriter) -> BoundTool:
    """retire_memory of `writer`'s user's memories, and no one else's."""

    def retire(args: RetireMemoryArguments, _cursor: str | None) -> Memory:
        return writer.retire_memory(args.memory_id, args.reason)

    return BoundTool(RETIRE_MEMORY, retire, renderer=render_retired, unavailable=WRITE_UNAVAILABLE)


def kept_memory_tools(
    memories: MemoriesSearcher,
    writer: MemoryWriter | None,
    *,
    turns: MemorySearcher | None = None,
    mode: str | None = None,
    contact_id: str | None = None,
    inbox_id: str | None = None,
    keywords: MemoriesSearcher | None = None,
    bounds: OutputBounds = DEFAULT_BOUNDS,
) -> list[BoundTool]:
    """recall_memories, and with a `writer`, save_memory and retire_memory."""
    tools = [
        recall_memories_tool(
            memories,
            turns=turns,
            mode=mode,
            contact_id=contact_id,
            inbox_id=inbox_id,
            keywords=keywords,
            bounds=bounds,
        )
    ]
    if writer is not None:
        tools += [save_memory_tool(writer), retire_memory_tool(writer)]
    return tools
