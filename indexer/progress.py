"""Which input position is safe to checkpoint: the end of the longest prefix of lines
whose events are all resolved (stored, refused, or dead-lettered).

Lines resolve out of order: an invalid line is dead-lettered at once while the valid
line before it still waits in a bulk chunk. Checkpointing past that valid line would
lose it on a crash, so positions are committed strictly in input order.
"""

from collections import deque
from typing import Generic, TypeVar

P = TypeVar("P")


class Progress(Generic[P]):
    def __init__(self, committed: P) -> None:
        self._next = 0
        self._first = 0  # ticket of the oldest unresolved line
        self._open: deque[tuple[P, bool]] = deque()
        self.committed = committed

    def open(self, position: P) -> int:
        """Register a line ending at `position`; returns its ticket."""
        self._open.append((position, False))
        self._next += 1
        return self._next - 1

    def resolve(self, ticket: int) -> None:
        index = ticket - self._first
        if not 0 <= index < len(self._open):
            raise ValueError(f"ticket {ticket} is not open")
        position, _ = self._open[index]
        self._open[index] = (position, True)
        while self._open and self._open[0][1]:
            self.committed, _ = self._open.popleft()
            self._first += 1

    @property
    def unresolved(self) -> int:
        return len(self._open)
