"""A model miner's answer, checked before anything is written.

The answer is `{"operations": [...]}` (`mining_request`). Each operation is validated
alone (pydantic): one that is malformed, of an unknown kind, whose sources are not
among the turns the model was given, or whose `memoryId` is not one of the memories it
was shown (an unknown id, another user's) is dropped and counted; the others stand.
An answer that is not JSON of that shape at all is a `MinerFailed`: the pass keeps the
turns for the next one.
"""

import json
from collections.abc import Collection
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from session_recall.core.kept_memories import (
    MAX_REASON_CHARS,
    MAX_SOURCES,
    MAX_STATEMENT_CHARS,
    MAX_SUBJECT_CHARS,
    MemoryKind,
)


class MinerFailed(Exception):
    """The model gave no usable answer (no connection, a timeout, an error status, an
    answer that is not JSON of the schema): the turns are mined again next pass."""


_Text = Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS)]
_Subject = Annotated[str, Field(min_length=1, max_length=MAX_SUBJECT_CHARS)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Add(_Strict):
    op: Literal["add"]
    statement: _Text
    kind: MemoryKind
    subject: _Subject | None = None
    sources: Annotated[list[str], Field(min_length=1, max_length=MAX_SOURCES)]


class Supersede(Add):
    op: Literal["supersede"]  # type: ignore[assignment]
    memory_id: str = Field(alias="memoryId", min_length=1)


class Retire(_Strict):
    op: Literal["retire"]
    memory_id: str = Field(alias="memoryId", min_length=1)
    reason: Annotated[str, Field(min_length=1, max_length=MAX_REASON_CHARS)]


Operation = Annotated[Add | Supersede | Retire, Field(discriminator="op")]
_OPERATION: TypeAdapter[Add | Supersede | Retire] = TypeAdapter(Operation)


class Operations(BaseModel):
    """The operations that stand, in the model's order, and how many were dropped."""

    operations: list[Add | Supersede | Retire] = []
    dropped: int = 0


def checked_operations(
    content: str, *, turn_ids: Collection[str], memory_ids: Collection[str]
) -> Operations:
    """The operations of the model's message `content` that keep to what it was given:
    sources among `turn_ids`, memory ids among `memory_ids`."""
    try:
        answer = json.loads(content)
    except (TypeError, ValueError):
        raise MinerFailed("an answer that is not JSON") from None
    items = answer.get("operations") if isinstance(answer, dict) else None
    if not isinstance(items, list):
        raise MinerFailed("an answer without a list of operations") from None
    kept, dropped = [], 0
    for item in items:
        try:
            operation = _OPERATION.validate_python(item)
        except ValidationError:
            dropped += 1
            continue
        sources = getattr(operation, "sources", [])
        target = getattr(operation, "memory_id", None)
        if not set(sources) <= set(turn_ids) or (target is not None and target not in memory_ids):
            dropped += 1
            continue
        kept.append(operation)
    return Operations(operations=kept, dropped=dropped)


__all__ = ["Add", "MinerFailed", "Operation", "Operations", "Retire", "Supersede",
           "checked_operations"]  # fmt: skip
