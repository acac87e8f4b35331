"""The names an alias's indices take, and the alias names that could share them.

An alias `ev` owns `ev-<period>` (its partitions, `ev-2026.07`: `core.partitions`), made
from a template matching `ev-1*` and `ev-2*`; its bookkeeping indices, `ev-tombstones`
(erasures), `ev-leases` (the enrichers' shares), `ev-memories` (kept memories) and
`ev-consolidation` (each user's last mining pass); and, made by an earlier release,
`ev-000001`. Each is the alias's name, a dash, and a suffix that starts with a digit or
is a bookkeeping one. So another alias can share one of them only if its own name is
`ev-` followed by such a suffix: `ev-2026`, whose partitions `ev-2026-2026.07` the
template of `ev` would take into `ev`; or `ev-tombstones`. No alias may hold a dash
followed by a digit, nor end in a bookkeeping suffix: then no two aliases, made in any
order, can share an index or a template pattern (`tests/unit/test_index_names.py`).

`alias_problem` is the one rule every command checks a name by (through `Settings`,
before anything is made), and `ALIAS_RULE` the one message that states it.
"""

import re

TOMBSTONES = "tombstones"
LEASES = "leases"
MEMORIES = "memories"
CONSOLIDATION = "consolidation"
SESSIONS = "sessions"
BOOKKEEPING = (TOMBSTONES, LEASES, MEMORIES, CONSOLIDATION, SESSIONS)
_DASH_DIGIT = re.compile(r"-[0-9]", re.ASCII)
# One concrete alias: never a pattern (`*`, `a,b`), a path (`../x`), a system name
# (`_all`, `.x`) or one Elasticsearch refuses; room is left for the suffixes of its
# partitions and bookkeeping indices within the 255 bytes of an index name.
MAX_ALIAS_CHARS = 200
_ALIAS = re.compile(rf"[a-z0-9][a-z0-9_-]{{0,{MAX_ALIAS_CHARS - 1}}}", re.ASCII)
ALIAS_RULE = (
    "Name another alias with --index (SESSION_RECALL_INDEX): up to "
    f"{MAX_ALIAS_CHARS} lowercase letters, digits, '-' and '_', starting with a letter or "
    "a digit, with no dash before a digit (ev_2026 rather than ev-2026), not ending in "
    "-tombstones, -leases, -memories or -consolidation; e.g. session-events."
)


def tombstone_index(alias: str) -> str:
    return f"{alias}-{TOMBSTONES}"


def lease_index(alias: str) -> str:
    return f"{alias}-{LEASES}"


def memory_index(alias: str) -> str:
    """Where `alias`'s kept memories live (`core.kept_memories`)."""
    return f"{alias}-{MEMORIES}"


def session_index(alias: str) -> str:
    """Where `alias`'s session documents live: one per session, derived from its events
    by the enrichment pass (`indexer.enrichment.session_documents`)."""
    return f"{alias}-{SESSIONS}"


def consolidation_index(alias: str) -> str:
    """Where each user's consolidation checkpoints live."""
    return f"{alias}-{CONSOLIDATION}"


def bookkeeping_indices(alias: str) -> list[str]:
    """The indices of `alias` that hold no events: its tombstones, leases, memories,
    consolidation checkpoints and session documents."""
    return [f"{alias}-{suffix}" for suffix in BOOKKEEPING]


def alias_problem(alias: str) -> str | None:
    """Why `alias` cannot be an alias of this project, or None when it can."""
    if _ALIAS.fullmatch(alias) is None:
        shown = alias if len(alias) <= 60 else f"{alias[:60]}... ({len(alias)} characters)"
        return f"{shown!r} is not a usable index alias."
    return shared_names(alias)


def shared_names(alias: str) -> str | None:
    """Why `alias` could share another alias's indices, or None when it never can."""
    dash_digit = _DASH_DIGIT.search(alias)
    if dash_digit is not None:
        owner = alias[: dash_digit.start()]
        return (
            f"{alias!r} holds a dash followed by a digit: the indices of alias {owner!r} "
            f"are named {owner}-<year>..., so {alias!r} could share them."
        )
    for suffix in BOOKKEEPING:
        if alias.endswith(f"-{suffix}"):
            owner = alias.removesuffix(f"-{suffix}")
            return f"{alias!r} is the name of the {suffix} index of alias {owner!r}."
    return None


__all__ = [
    "ALIAS_RULE",
    "BOOKKEEPING",
    "CONSOLIDATION",
    "LEASES",
    "MAX_ALIAS_CHARS",
    "MEMORIES",
    "SESSIONS",
    "TOMBSTONES",
    "alias_problem",
    "bookkeeping_indices",
    "consolidation_index",
    "lease_index",
    "memory_index",
    "session_index",
    "shared_names",
    "tombstone_index",
]
