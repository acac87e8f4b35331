"""What a model-backed miner sends: the candidate turns, the nearest current memories,
and the JSON schema its answer must follow (OpenAI's `response_format` of type
`json_schema`, strict). Pure: the same turns and memories give the same body.

The model answers `{"operations": [...]}`, each operation one of:

- `add`: a new memory (`statement`, `kind`, `subject` or null, `sources`: ids of the
  turns given);
- `supersede`: a new memory that replaces a given one (`memoryId` and the new memory);
- `retire`: a given memory that no longer holds (`memoryId`, `reason`).

The schema keeps to the keywords strict servers take (no string lengths: the limits
are checked on the answer). It says what a model may write; `mining_answer` checks
what it did write.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from session_recall.core.kept_memories import MEMORY_KINDS
from session_recall.indexer.enrichment.miner import Turn

SCHEMA_NAME = "memory_operations"
# A turn's text is cut there before it is sent: a pasted log of megabytes would crowd
# the model's context, and what a user asks to keep is said in a few sentences.
MAX_TURN_CHARS = 2_000

INSTRUCTIONS = (
    "You keep a user's long-term memories: short, standalone statements of what the "
    "user decided, corrected, asked to remember (instruction), prefers, or stated as a "
    "fact about their own affairs. You are given the user's new turns, each with its id, "
    "and the user's current memories nearest to them, each with its memoryId. Answer "
    "with operations: `add` a memory the turns state that no current memory holds; "
    "`supersede` a current memory the turns change (a correction, a newer decision or "
    "preference on the same subject); `retire` a current memory the turns say no longer "
    "holds. `sources` are the ids of the turns the memory rests on, only ids given here. "
    "Keep only what the user says plainly about their own affairs: not questions, "
    "hypotheticals, or what someone else said. Nothing worth keeping: no operations."
)


@dataclass(frozen=True)
class Known:
    """A current memory of the user, as the model is shown it."""

    memory_id: str
    kind: str
    subject: str | None
    statement: str


def _memory_fields() -> dict[str, Any]:
    return {
        "statement": {"type": "string"},
        "kind": {"type": "string", "enum": list(MEMORY_KINDS)},
        "subject": {"type": ["string", "null"]},
        "sources": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    }


def _operation(op: str, fields: dict[str, Any]) -> dict[str, Any]:
    # Strict structured output (OpenAI's) wants every property required and no others.
    properties = {"op": {"type": "string", "enum": [op]}, **fields}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def operations_schema() -> dict[str, Any]:
    """The JSON schema of the model's answer."""
    memory_id = {"memoryId": {"type": "string"}}
    return {
        "type": "object",
        "properties": {
            "operations": {
                "type": "array",
                "items": {
                    "anyOf": [
                        _operation("add", _memory_fields()),
                        _operation("supersede", {**memory_id, **_memory_fields()}),
                        _operation("retire", {**memory_id, "reason": {"type": "string"}}),
                    ]
                },
            }
        },
        "required": ["operations"],
        "additionalProperties": False,
    }


def mining_request(model: str, turns: Sequence[Turn], memories: Sequence[Known]) -> dict[str, Any]:
    """The chat-completions body asking `model` for the operations."""
    shown = {
        "turns": [
            {"id": t.event_id, "time": t.timestamp.isoformat(), "text": t.text[:MAX_TURN_CHARS]}
            for t in turns
        ],
        "memories": [
            {
                "memoryId": m.memory_id,
                "kind": m.kind,
                "subject": m.subject,
                "statement": m.statement,
            }
            for m in memories
        ],
    }
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": json.dumps(shown, ensure_ascii=False)},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": operations_schema()},
        },
        # The same turns should give the same memories, pass after pass.
        "temperature": 0,
    }


__all__ = ["INSTRUCTIONS", "MAX_TURN_CHARS", "SCHEMA_NAME", "Known", "mining_request",
           "operations_schema"]  # fmt: skip
