"""How several enrichers split one alias's work: by slices of the sessions' slots.

Every event carries its session's `slot` (`document.session_slot`, 0 to 65535), so a
slice, a range of slots, holds whole sessions: the turns whose contexts hold each
other are enriched by one enricher, in order, and two enrichers of one way of sharing
never embed the same event. (Enrichers of different ways do not know of each other: a
one-off `embed`, or `--slice`, beside followers that share by leases, may do an event
the followers do too. Every write is conditional, so nothing is lost, only work.)
Slice `i` of `n` is the `i`-th of `n` equal ranges; slice 0 also takes the
events stored before slots existed, which have none.

`Share` says what an enricher takes at each pass: everything (`EVERYTHING`), one slice
given by the operator (`session-recall embed --slice 2/4`, `--workers N`), or the
slices it holds leases on (`leases.Leased`: serve's replicas share by themselves).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from session_recall.indexer.document import SLOT_FIELD, SLOTS


@dataclass(frozen=True, order=True)
class Slice:
    index: int
    count: int

    def __post_init__(self) -> None:
        if not (self.count >= 1 and 0 <= self.index < self.count):
            raise ValueError(f"no slice {self.index} of {self.count}")

    @classmethod
    def parse(cls, text: str) -> "Slice":
        """`"I/N"`, counted from 0: `"0/2"` and `"1/2"` are the two halves."""
        index, sep, count = text.partition("/")
        try:
            if sep:
                return cls(int(index), int(count))
        except ValueError:
            pass
        raise ValueError(f"{text!r} is not a slice: give I/N, with 0 <= I < N (0/2, 1/2)")

    @property
    def slots(self) -> tuple[int, int]:
        """Its slots: from the first, up to the second (excluded)."""
        return self.index * SLOTS // self.count, (self.index + 1) * SLOTS // self.count

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def slices_query(slices: Iterable[Slice]) -> dict[str, Any]:
    """A filter for the events of `slices` (none: no event)."""
    ranges: list[dict[str, Any]] = [{"bool": {"must_not": [{"match_all": {}}]}}]
    for piece in sorted(set(slices)):
        low, high = piece.slots
        ranges.append({"range": {SLOT_FIELD: {"gte": low, "lt": high}}})
        if piece.index == 0:  # stored before slots: slice 0 of any count takes them
            ranges.append({"bool": {"must_not": [{"exists": {"field": SLOT_FIELD}}]}})
    return {"bool": {"should": ranges, "minimum_should_match": 1}}


class Share(Protocol):
    """What one enricher takes: asked at the start of each pass (`take`: None for every
    event, else the filter of its slices), and between two pages (`keeps`: False when
    it lost what it took, so the pass stops and the next one asks again)."""

    def take(self) -> dict[str, Any] | None: ...

    def keeps(self) -> bool: ...

    def leave(self) -> None: ...


class _Everything:
    def take(self) -> dict[str, Any] | None:
        return None

    def keeps(self) -> bool:
        return True

    def leave(self) -> None:
        pass


EVERYTHING: Share = _Everything()


@dataclass(frozen=True)
class Fixed:
    """One slice, given by the operator: nobody else takes it unless told to."""

    slice: Slice

    def take(self) -> dict[str, Any] | None:
        return slices_query([self.slice])

    def keeps(self) -> bool:
        return True

    def leave(self) -> None:
        pass
