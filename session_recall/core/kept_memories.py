"""Kept memories: what an agent (or the built-in miner) concluded from a user's events.

A memory is one user's, like an event: stored in the alias's own memories index
(`memory_index`), routed by its user, and pinned to that user in every read. It names
the events it came from (`sources`, event ids, always at least one; `source_ids`, their
document `_id`s, by which an erasure finds it), and is superseded rather than
contradicted: a newer memory on the same subject sets the older one's `valid_to` and
`superseded_by`, and the older one is kept as history.

The stored fields follow the events' names (snake_case, `memory_id`); the JSON that
the CLI and HTTP give back uses the camelCase names of the API (`memoryId`,
`validFrom`, `supersededBy`), as events accept `userId` beside `user_id`.
"""

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from session_recall.core.digest import digest
from session_recall.core.instant import Instant

MemoryKind = Literal["decision", "correction", "instruction", "preference", "fact"]
MEMORY_KINDS: tuple[MemoryKind, ...] = get_args(MemoryKind)
# "miner en-2" for the built-in miner's, "agent" for a caller's own.
AGENT_ORIGIN = "agent"

# A statement is short and standalone: a few sentences at most. Longer text belongs in
# an event; the bound also keeps a keyword term and a vector's input small.
MAX_STATEMENT_CHARS = 2000
MAX_SUBJECT_CHARS = 200
MAX_REASON_CHARS = 500
# A memory comes from a few turns; more would make every erasure's lookup heavier.
MAX_SOURCES = 50


def memory_id(user_id: str, kind: str, statement: str, sources: list[str]) -> str:
    """A memory's id: a digest of its user, kind, statement and sources (as a JSON
    list, never a joined string). The same conclusion from the same turns is the same
    memory, so a pass run twice, or two consolidators, store it once."""
    return digest([user_id, kind, statement, sorted(set(sources))])[:32]


class Memory(BaseModel):
    """One kept memory, as recall returns it. `superseded_by` and `valid_to` are None
    while it is current; `retired` says why a memory was retired without a successor."""

    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True
    )

    memory_id: str
    user_id: str = Field(exclude=True)  # the caller's own: never echoed back
    kind: MemoryKind
    statement: str
    subject: str | None = None
    sources: list[str]
    valid_from: Instant
    superseded_by: str | None = None
    valid_to: Instant | None = None
    origin: str
    contact_id: str | None = Field(default=None, exclude_if=lambda value: value is None)
    inbox_id: str | None = Field(default=None, exclude_if=lambda value: value is None)
    retired: str | None = Field(default=None, exclude_if=lambda value: value is None)

    @property
    def current(self) -> bool:
        return self.valid_to is None

    @classmethod
    def from_source(cls, source: dict[str, object]) -> "Memory":
        """A memory from its stored document (`_source`)."""
        fields = {name: source.get(name) for name in cls.model_fields if name in source}
        return cls.model_validate(fields)


__all__ = [
    "AGENT_ORIGIN",
    "MAX_REASON_CHARS",
    "MAX_SOURCES",
    "MAX_STATEMENT_CHARS",
    "MAX_SUBJECT_CHARS",
    "MEMORY_KINDS",
    "Memory",
    "MemoryKind",
    "memory_id",
]
