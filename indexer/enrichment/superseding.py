"""Which current memories a newly mined one replaces: pure, decided on subjects alone.

Rules (measured on the labelled set, `bench/memory_mining.py`):

- A decision, preference or instruction supersedes the current memories of its own
  kind on the same subject, and corrections on that subject: a newer "let's go with
  MySQL for billing" replaces "use PostgreSQL for billing". Instructions and facts count
  as one kind (both are what the user states to be so).
- A bare correction ("actually, the rent is due on the 1st now") corrects one thing:
  the most recent current memory on its subject, of any kind.
- A memory with no subject supersedes nothing: it is kept beside the others.

Same subject means equal keys, or one key ending with the other's words (`deadline`
and `submission deadline`); a choice between alternatives (`space | tab`) is the same
subject as each of them. Vector similarity is not used: the store may add it later.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from session_recall.indexer.enrichment.miner import Candidate, Kind
from session_recall.indexer.enrichment.subjects import ALTERNATIVES


@dataclass(frozen=True)
class Current:
    """A current memory (not superseded) of the candidate's user."""

    memory_id: str
    kind: Kind
    subject: str | None
    statement: str
    valid_from: datetime


def _group(kind: Kind) -> str:
    return "statement" if kind in ("instruction", "fact") else kind


def _suffix(short: list[str], long: list[str]) -> bool:
    return len(short) <= len(long) and long[len(long) - len(short) :] == short


def same_subject(a: str | None, b: str | None) -> bool:
    """Whether two subject keys name the same thing (never when either is None)."""
    if not a or not b:
        return False
    for left in a.split(ALTERNATIVES):
        for right in b.split(ALTERNATIVES):
            one, other = left.split(), right.split()
            if one and other and (_suffix(one, other) or _suffix(other, one)):
                return True
    return False


def superseded_by(candidate: Candidate, current: Sequence[Current]) -> list[str]:
    """The ids of the current memories that `candidate` replaces, oldest first."""
    on_subject = [m for m in current if same_subject(candidate.subject, m.subject)]
    if candidate.kind == "correction":
        latest = max(on_subject, key=lambda m: (m.valid_from, m.memory_id), default=None)
        return [] if latest is None else [latest.memory_id]
    group = _group(candidate.kind)
    replaced = [m for m in on_subject if m.kind == "correction" or _group(m.kind) == group]
    return [m.memory_id for m in sorted(replaced, key=lambda m: (m.valid_from, m.memory_id))]
