"""What happened to each event, and to a whole run."""

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, Field

from session_recall.core.echo import echoed
from session_recall.core.limits import MAX_ID_CHARS

# The reason given for an event refused because a tombstone covers it: it belongs to
# an erased scope and is stamped at or before that erasure (a late retry or a replay).
SCOPE_ERASED = "scope erased"


# What an event was refused for, in a few classes (a metric's label: bounded, unlike
# the reasons themselves, which name partitions and quote Elasticsearch).
RefusalClass = Literal["invalid", "scope_erased", "partition", "forbidden", "elasticsearch"]
REFUSAL_CLASSES: tuple[RefusalClass, ...] = get_args(RefusalClass)


def refusal_class(reason: str) -> RefusalClass:
    """The class of a refusal's reason, as the parser and the writer word them: the
    event itself was invalid (unreadable, out of bounds, too long), its scope was
    erased, its partition could not be made, the credential may not store it, or
    Elasticsearch refused it."""
    if reason == SCOPE_ERASED:
        return "scope_erased"
    if reason.startswith("its partition "):
        return "partition"
    if reason.startswith("Elasticsearch refused it (403)"):
        return "forbidden"
    if reason.startswith("Elasticsearch refused it"):
        return "elasticsearch"
    return "invalid"


class Status(StrEnum):
    INDEXED = "indexed"
    ALREADY_PRESENT = "already_present"
    REJECTED = "rejected"


# Read once per event: a module name is cheaper than the enum's attribute.
_INDEXED, _ALREADY_PRESENT, _REJECTED = Status.INDEXED, Status.ALREADY_PRESENT, Status.REJECTED


# A dataclass, not a model: one is made per event, and building a model costs four
# times as much. pydantic still validates and renders it where it is part of an
# answer (`EventsResponse`).
@dataclass(slots=True)
class EventResult:
    """One event's outcome. `indexed` and `already_present` both mean "stored"."""

    status: Status
    event_id: str | None = None
    reason: Annotated[
        str | None,
        Field(
            description=f"Why a rejected event was refused; {SCOPE_ERASED!r} when its scope "
            "was erased after it was stamped (refused on purpose: sending it again changes "
            "nothing)."
        ),
    ] = None

    @property
    def stored(self) -> bool:
        return self.status is not _REJECTED

    @property
    def erased(self) -> bool:
        """Refused on purpose: the event belongs to a scope erased after its timestamp."""
        return self.status is Status.REJECTED and self.reason == SCOPE_ERASED


def refusal(original: object, reason: str, event_id: str | None = None) -> EventResult:
    """The result of an event refused before it was written: its id is `event_id`, or
    the one it was given, if any (`original`: what its line or value parsed to). An id
    longer than any event's is echoed cut (`core.echo`): it is refused for that."""
    if event_id is None and isinstance(original, dict):
        given = original.get("event_id", original.get("eventId"))
        event_id = given if isinstance(given, str) else None
    if event_id is not None and len(event_id) > MAX_ID_CHARS:
        event_id = echoed(event_id)
    return EventResult(status=_REJECTED, event_id=event_id, reason=reason)


class IngestSummary(BaseModel):
    """Counts of a run. Of the `rejected`, `dead_lettered` went to the dead-letter file
    and `erased` were refused because their scope was erased (copied nowhere: that is
    what the erasure asked for)."""

    read: int = 0
    indexed: int = 0
    already_present: int = 0
    rejected: int = 0
    dead_lettered: int = 0
    erased: int = Field(default=0, description="Rejected events of an erased scope.")
    retries: int = Field(default=0, description="Events sent again after a 429 or 5xx.")
    throttled: int = Field(default=0, description="429 answers seen.")
    without_vectors: int = Field(
        default=0,
        description="Events stored without a vector (the embedder failed, or the index "
        "predates the vector fields); `session-recall embed` adds them.",
    )
    dead_letter: Path | None = None

    def count_all(self, results: Iterable[EventResult]) -> None:
        """Count a chunk's results at once."""
        # Counted in place: pydantic's checked assignment would cost more than the
        # event's own bookkeeping, once per event.
        indexed = already_present = rejected = erased = 0
        for result in results:
            status = result.status
            if status is _INDEXED:
                indexed += 1
            elif status is _ALREADY_PRESENT:
                already_present += 1
            else:
                rejected += 1
                erased += result.reason == SCOPE_ERASED
        counts = self.__dict__
        counts["indexed"] += indexed
        counts["already_present"] += already_present
        counts["rejected"] += rejected
        counts["erased"] += erased

    def count_read(self, *, rejected: bool = False, events: int = 1) -> None:
        """More events read (one by default); `rejected` when it was refused before
        being sent."""
        counts = self.__dict__
        counts["read"] += events
        counts["rejected"] += rejected

    def count_batch(self, size: int, exceptions: Iterable[EventResult]) -> None:
        """Count a batch of `size` events, all indexed but for the `exceptions`."""
        exceptions = list(exceptions)
        self.count_all(exceptions)
        self.__dict__["indexed"] += size - len(exceptions)

    @property
    def all_accepted(self) -> bool:
        """Nothing went to the dead-letter file. Events of an erased scope do not count
        against it: refusing them is the erasure working, not a failure of the run."""
        return self.dead_lettered == 0

    def line(self) -> str:
        """The one-line summary a command prints at the end."""
        text = (
            f"Read {self.read}, indexed {self.indexed}, already present "
            f"{self.already_present}, rejected {self.rejected}"
        )
        details = []
        if self.dead_lettered:
            details.append(f"{self.dead_lettered} written to {self.dead_letter}")
        if self.erased:
            details.append(f"{self.erased} of an erased scope")
        if details:
            text += f" ({', '.join(details)})"
        if self.retries:
            text += f"; {self.retries} retried ({self.throttled} throttled)"
        if self.without_vectors:
            text += (
                f"; {self.without_vectors} stored without vectors (see the warning; "
                "`session-recall embed` adds them)"
            )
        return text + "."
