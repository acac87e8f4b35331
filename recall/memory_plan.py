"""What memory_search's plan is made of: the searches of one `msearch`, and an event's
identity across the alias. The plan (`memory_search`) yields `Searches` and is sent
back each search's answer, so the sync and the async searcher run the same steps."""

from dataclasses import dataclass
from typing import Any

from session_recall.recall.query import Body

Key = tuple[str, str]  # (_index, _id): an event's identity across the alias


@dataclass(frozen=True)
class Searches:
    """One `msearch`: its bodies, each sent to the alias or (`indices`) to one index of it;
    those that `optional` marks find nothing where they fail (`transport.msearch`)."""

    bodies: list[Body]
    indices: list[str | None] | None = None
    optional: list[bool] | None = None


def key_of(hit: Body) -> Key:
    return (str(hit["_index"]), str(hit["_id"]))


def scored(hits: list[dict[str, Any]]) -> list[tuple[Key, float]]:
    """A ranking as fusion takes it: each hit's key and score, best first."""
    return [(key_of(hit), float(hit.get("_score") or 0.0)) for hit in hits]
