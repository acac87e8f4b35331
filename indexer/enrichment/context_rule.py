"""The context rule: what an event's `context` holds, from the turns before it. Pure.

An event's **context** is the stems of its own text and of the `CONTEXT_REACH` turns
just before it in its session (each cut to its first `_NEIGHBOUR_TERMS` stems): what the
conversation was about when it was said. Only turns before it: when events arrive in
order, an event's context is complete the first time it is enriched, so the enrichment
pass writes each event once after it is stored, and a later turn never rewrites an
earlier one. A turn stored late, between turns already enriched, makes the pass rewrite
the up to `CONTEXT_REACH` turns after it (`followers`).

Two fields record where a context came from, so that it can be kept true:

- `context_of`: the `_id`s of the turns before it whose stems it holds. An erased
  event's words would otherwise live on in the turns after it; those are found by this
  field and rebuilt without it (`repair.repair_erased`).
- `context_since`: the instant of the earliest of those turns, so that the turns whose
  context reaches into a period that `prune` removes are found by a range.

`CONTEXT_REACH` is read at each use, here and by the reads (`turns`), so that a bench
that sets it on this module reaches the passes it runs afterwards.
"""

from collections.abc import Collection, Sequence
from typing import Any

from session_recall.core.instant import Instant
from session_recall.core.stems import stems

# The context rule's version: a new rule gets a new mark, and the pass redoes every event.
CONTEXT_MARK = "context-2"
ENRICHED_FIELD = "enriched"
STEMS_FIELD = "stems"
CONTEXT_FIELD = "context"
CONTEXT_OF_FIELD = "context_of"
CONTEXT_SINCE_FIELD = "context_since"
# The turns before an event that its context holds.
CONTEXT_REACH = 3
# What one earlier turn adds to a context, at most: a tool's long output is a turn too,
# and its first words say what it is about.
_NEIGHBOUR_TERMS = 200

Hit = dict[str, Any]
Key = tuple[str, str]  # (_index, _id): a stored event across the alias


def key(hit: Hit) -> Key:
    return (str(hit["_index"]), str(hit["_id"]))


def listed(hit: Hit, field: str) -> list[str]:
    """A keyword field of `hit`'s source as a list (one value, several, or none)."""
    value = hit.get("_source", {}).get(field) or []
    return [value] if isinstance(value, str) else list(value)


def is_enriched(hit: Hit) -> bool:
    return CONTEXT_MARK in listed(hit, ENRICHED_FIELD)


def context_fields(turns: Sequence[Hit], terms: Sequence[str], i: int) -> dict[str, Any]:
    """The context of `turns[i]` from the turns before it (`terms`: each turn's stems)."""
    start = max(i - CONTEXT_REACH, 0)
    before = [_head(t) for t in terms[start:i]]
    fields: dict[str, Any] = {
        CONTEXT_FIELD: " ".join(part for part in [*before, terms[i]] if part),
        CONTEXT_OF_FIELD: [str(turn["_id"]) for turn in turns[start:i]],
    }
    fields[CONTEXT_SINCE_FIELD] = turns[start]["_source"]["timestamp"] if start < i else None
    return fields


def _head(terms: str) -> str:
    return " ".join(terms.split(" ", _NEIGHBOUR_TERMS)[:_NEIGHBOUR_TERMS])


def turn_terms(turns: Sequence[Hit]) -> list[str]:
    return [stems(turn["_source"].get("text", "")) for turn in turns]


def position(source: dict[str, Any]) -> list[Any]:
    """An event's sort values in the event order, from its stored fields."""
    return [Instant.parse(source["timestamp"]).nanos, source["event_id"], source["user_id"]]


def followers(turns: Sequence[Hit], mine: Collection[Key]) -> list[int]:
    """The turns (by position) not among `mine` whose context holds one of `mine`:
    those that a turn stored late must reach."""
    return [
        i
        for i, turn in enumerate(turns)
        if key(turn) not in mine
        and any(key(t) in mine for t in turns[max(i - CONTEXT_REACH, 0) : i])
    ]


def held(turns: Sequence[Hit], i: int) -> list[Hit]:
    """The turns whose stems the context of `turns[i]` holds."""
    return list(turns[max(i - CONTEXT_REACH, 0) : i])
