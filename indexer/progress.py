"""Which input position is safe to checkpoint: the end of the longest prefix of lines
whose events are all resolved (stored, refused, or dead-lettered).

Lines resolve out of order: an invalid line is dead-lettered at once while the valid
line before it still waits in a bulk chunk. Checkpointing past that valid line would
lose it on a crash, so positions are committed strictly in input order.
"""

from collections.abc import Iterable
from typing import Generic, TypeVar

P = TypeVar("P")

# Lines already committed are dropped from the front in batches of at least this many:
# often enough to bound memory, rarely enough that the copy costs nothing per line.
_COMPACT_AFTER = 4096


class Progress(Generic[P]):
    def __init__(self, committed: P, *, compact_after: int = _COMPACT_AFTER) -> None:
        # Line `ticket` is at index `ticket - self._base`; those before `self._head` are
        # committed. Lists indexed in place: a deque's middle costs a walk per lookup.
        self._base = 0
        self._head = 0
        self._positions: list[P] = []
        self._resolved = bytearray()
        self.committed = committed
        self._compact_after = compact_after

    def open(self, position: P) -> int:
        """Register a line ending at `position`; returns its ticket."""
        self._positions.append(position)
        self._resolved.append(0)
        return self._base + len(self._resolved) - 1

    def item(self, ticket: int) -> P:
        """What `open` registered for a ticket not yet compacted away (an unresolved
        one, or one of the chunk being resolved)."""
        return self._positions[ticket - self._base]

    def resolve(self, ticket: int) -> None:
        self.resolve_all((ticket,))

    def resolve_all(self, tickets: Iterable[int]) -> None:
        """Resolve several lines at once (a chunk's): one pass, whatever their order."""
        resolved, base, head = self._resolved, self._base, self._head
        size = len(resolved)
        for ticket in tickets:
            index = ticket - base
            if not head <= index < size or resolved[index]:
                raise ValueError(f"ticket {ticket} is not open")
            resolved[index] = 1
        end = resolved.find(0, head)
        end = size if end < 0 else end
        if end == head:
            return
        self.committed = self._positions[end - 1]
        self._head = end
        if end >= self._compact_after and end * 2 >= size:
            del self._positions[:end]
            del self._resolved[:end]
            self._base += end
            self._head = 0

    @property
    def unresolved(self) -> int:
        return len(self._resolved) - self._head
