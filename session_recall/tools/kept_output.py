"""What the kept-memory tools give the model.

recall_memories answers with one compact JSON object, memories first:

    {"memories": [{"memoryId": ..., "kind": "decision", "statement": ...,
                   "subject": ..., "sources": [...], "validFrom": ...,
                   "supersededBy": null}],
     "turns": [{"sessionId": ..., "timestamp": ..., "type": ..., "text": ..., ...}]}

`turns` is there only when the model asked for them (memory_search's rows, each with
its neighbours). A superseded memory (asked for with includeSuperseded) also carries
its `validTo`; a retired one, its `retired` reason. A row (`memory_row`) has the fields
of `memories list --json` but `origin`, and `subject` and `validTo` only when set. With
nothing found: "No results found.", as every tool says it.
"""

import json
from collections.abc import Sequence
from typing import Any

from session_recall.core.kept_memories import Memory
from session_recall.recall import MemorySearchResult
from session_recall.tools.memory_output import memory_rows
from session_recall.tools.output import NO_RESULTS


def memory_row(memory: Memory) -> dict[str, Any]:
    row: dict[str, Any] = {
        "memoryId": memory.memory_id,
        "kind": memory.kind,
        "statement": memory.statement,
    }
    if memory.subject:
        row["subject"] = memory.subject
    row |= {
        "sources": list(memory.sources),
        "validFrom": memory.valid_from.isoformat(),
        "supersededBy": memory.superseded_by,
    }
    if memory.valid_to is not None:
        row["validTo"] = memory.valid_to.isoformat()
    if memory.retired:
        row["retired"] = memory.retired
    return row


def render_recalled(memories: Sequence[Memory], turns: MemorySearchResult | None) -> str:
    rows = [memory_row(memory) for memory in memories]
    turn_rows = memory_rows(turns) if turns is not None else []
    if not rows and not turn_rows:
        return NO_RESULTS
    document: dict[str, Any] = {"memories": rows}
    if turns is not None:
        document["turns"] = turn_rows
    return _compact(document)


def render_saved(memory: Memory, *, created: bool, superseded: Sequence[str]) -> str:
    """save_memory's answer: the memory's row, whether it is new (false: the same
    memory was saved before), and the ids of the memories it superseded."""
    return _compact(
        {"saved": memory_row(memory), "created": created, "superseded": list(superseded)}
    )


def render_retired(memory: Memory) -> str:
    return _compact({"retired": memory_row(memory)})


def _compact(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))
