"""What happened to each event, and to a whole run."""

from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field

SCOPE_ERASED = "scope erased"


class Status(StrEnum):
    INDEXED = "indexed"
    ALREADY_PRESENT = "already_present"
    REJECTED = "rejected"


class EventResult(BaseModel):
    """One event's outcome. `indexed` and `already_present` both mean "stored"."""

    status: Status
    event_id: str | None = None
    reason: str | None = Field(default=None, description="Why a rejected event was refused.")

    @property
    def stored(self) -> bool:
        return self.status is not Status.REJECTED


class IngestSummary(BaseModel):
    """Counts of a run; `dead_lettered` of the `rejected` went to the dead-letter file
    (events of an erased scope are rejected but never copied anywhere)."""

    read: int = 0
    indexed: int = 0
    already_present: int = 0
    rejected: int = 0
    dead_lettered: int = 0
    retries: int = Field(default=0, description="Events sent again after a 429 or 5xx.")
    throttled: int = Field(default=0, description="429 answers seen.")
    dead_letter: Path | None = None

    def count(self, result: EventResult) -> None:
        if result.status is Status.INDEXED:
            self.indexed += 1
        elif result.status is Status.ALREADY_PRESENT:
            self.already_present += 1
        else:
            self.rejected += 1

    @property
    def all_accepted(self) -> bool:
        return self.dead_lettered == 0

    def line(self) -> str:
        """The one-line summary a command prints at the end."""
        text = (
            f"Read {self.read}, indexed {self.indexed}, already present "
            f"{self.already_present}, rejected {self.rejected}"
        )
        if self.dead_lettered:
            text += f" ({self.dead_lettered} written to {self.dead_letter})"
        if self.retries:
            text += f"; {self.retries} retried ({self.throttled} throttled)"
        return text + "."
