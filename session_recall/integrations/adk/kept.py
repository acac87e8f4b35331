"""Kept memories as ADK's `MemoryEntry`s, and the entries `add_memory` keeps as them.

A kept memory comes back from `search_memory` as an entry whose text is its
statement, its id the memory's id, its timestamp the memory's `validFrom`, its author
`kept-memory`, and in `custom_metadata` its kind, subject and source events under
`KEY`, so that an agent (and `PreloadMemoryTool`, which shows the text) can tell it
from a turn.

An entry given to `add_memory` is saved as a kept memory when its `custom_metadata`
(or the call's) holds `KEY` with the memory's `kind` and `sources` (event ids of the
same user), and optionally `supersedes` and `subject`:

    MemoryEntry(content=types.Content(parts=[types.Part(text="Ana takes no sugar.")]),
                custom_metadata={"kept_memory": {"kind": "preference",
                                                 "sources": ["e-17"]}})

Any other entry is stored as an event, as before.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.memory.memory_entry import MemoryEntry
from google.genai import types

from session_recall.core.kept_memories import Memory
from session_recall.indexer import MemoryRefused

KEY = "kept_memory"
AUTHOR = "kept-memory"


@dataclass(frozen=True)
class KeptRequest:
    """What `save_memory` takes, read from an entry."""

    statement: str
    kind: str
    sources: list[str]
    supersedes: str | None = None
    subject: str | None = None


def to_kept_entry(memory: Memory) -> MemoryEntry:
    details: dict[str, Any] = {
        "kind": memory.kind,
        "sources": list(memory.sources),
        "valid_from": memory.valid_from.isoformat(),
    }
    if memory.subject:
        details["subject"] = memory.subject
    return MemoryEntry(
        id=memory.memory_id,
        content=types.Content(role="model", parts=[types.Part(text=memory.statement)]),
        author=AUTHOR,
        timestamp=memory.valid_from.isoformat(),
        custom_metadata={KEY: details},
    )


def kept_request(
    entry: MemoryEntry, custom_metadata: Mapping[str, object] | None
) -> KeptRequest | None:
    """The kept memory `entry` asks for, or None for an entry to store as an event.
    An entry that names `KEY` but not a usable kind and sources is refused by name."""
    given = {**(entry.custom_metadata or {}), **(custom_metadata or {})}.get(KEY)
    if given is None:
        return None
    if not isinstance(given, Mapping):
        raise MemoryRefused(
            f"custom_metadata[{KEY!r}] must be a mapping with 'kind' and 'sources'.",
            hint='Pass e.g. {"kind": "preference", "sources": ["EVENT_ID"]}.',
        )
    texts = [part.text for part in (entry.content.parts or []) if part.text]
    sources = given.get("sources")
    return KeptRequest(
        statement=" ".join(texts),
        kind=str(given.get("kind", "")),
        sources=list(sources) if isinstance(sources, list | tuple) else [],
        supersedes=_optional(given.get("supersedes")),
        subject=_optional(given.get("subject")),
    )


def _optional(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
