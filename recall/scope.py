"""What a searcher is bound to: the fields every hit must carry, and the routing."""

from dataclasses import dataclass
from typing import Any

from session_recall.core import digest
from session_recall.core.limits import MAX_ID_CHARS
from session_recall.recall.errors import InvalidScope


@dataclass(frozen=True)
class SearchScope:
    """The part of every query that no argument of a search can change.

    `key` identifies the scope for cursors: a tuple, JSON-encoded when digested, so
    ("a/b", "c") and ("a", "b/c") never collide as a joined string would.
    """

    key: tuple[Any, ...]
    # The clauses that bind every hit to the searcher's user (`core.user_filter`).
    pinned: tuple[dict[str, Any], ...]
    # Further filter clauses every hit must match (scope C: which conversations).
    clauses: tuple[dict[str, Any], ...] = ()
    # The user_id: one user's events live on one shard, so the search touches only it.
    routing: str | None = None

    def filters(self) -> list[dict[str, Any]]:
        return [*self.pinned, *self.clauses]


def binding(value: Any) -> str:
    """What a cursor is bound to: a digest of a JSON value, shortened (a cursor only
    needs to tell its own search from another, and it travels in every call)."""
    return digest(value)[:32]


def required(name: str, value: object) -> str:
    """A scope value: a non-empty string, since an empty one would match nothing or all,
    and no longer than any stored id (ingest refuses longer ones)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidScope(
            f"{name} must be a non-empty string, not {value!r}.",
            hint=f"Pass the {name} the events were stored with.",
        )
    if len(value) > MAX_ID_CHARS:
        raise InvalidScope(
            f"{name} is {len(value)} characters long; the limit is {MAX_ID_CHARS}.",
            hint=f"No stored event has a longer {name}: pass the id it was stored with.",
        )
    return value
