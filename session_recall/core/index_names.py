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
"""

import re

TOMBSTONES = "tombstones"
LEASES = "leases"
MEMORIES = "memories"
CONSOLIDATION = "consolidation"
BOOKKEEPING = (TOMBSTONES, LEASES, MEMORIES, CONSOLIDATION)
_DASH_DIGIT = re.compile(r"-[0-9]", re.ASCII)


def tombstone_index(alias: str) -> str:
    return f"{alias}-{TOMBSTONES}"


def lease_index(alias: str) -> str:
    return f"{alias}-{LEASES}"


def memory_index(alias: str) -> str:
    """Where `alias`'s kept memories live (`core.kept_memories`)."""
    return f"{alias}-{MEMORIES}"


def consolidation_index(alias: str) -> str:
    """Where each user's consolidation checkpoints live."""
    return f"{alias}-{CONSOLIDATION}"


def bookkeeping_indices(alias: str) -> list[str]:
    """The indices of `alias` that hold no events: its tombstones, leases, memories
    and consolidation checkpoints."""
    return [f"{alias}-{suffix}" for suffix in BOOKKEEPING]


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
    "BOOKKEEPING",
    "CONSOLIDATION",
    "LEASES",
    "MEMORIES",
    "TOMBSTONES",
    "bookkeeping_indices",
    "consolidation_index",
    "lease_index",
    "memory_index",
    "shared_names",
    "tombstone_index",
]
