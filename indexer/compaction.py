"""Compaction: each partition of a period that ended, merged into one segment.

A relevance search has no time range to skip partitions by, so memory_search's keyword
and kNN lists visit every partition of the alias, and within a partition every
segment: a kNN search walks one HNSW graph per segment, a term is looked up once per
segment. Elasticsearch merges segments by size, never down to one, so a partition
written to for a month keeps a few. Once its period has ended it is hardly written to
again (a late event, its enrichment, an erasure), which is when Elasticsearch advises a
force merge, and memory_search is faster for it (BENCHMARKS.md, "Semantic recall").

A write after compaction makes a new small segment, which the next run merges in:
run it once a period has ended (a monthly timer), and after a bulk load of old events.
Partitions already in one segment are left alone, so a second run costs one request.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

from elasticsearch import Elasticsearch, NotFoundError

from session_recall.core.instant import Instant
from session_recall.indexer.layout import ending_before, stored_indices

# A merge blocks the request until it is done: a partition of a few million events with
# vectors takes minutes on a small machine.
MERGE_TIMEOUT_S = 3600.0


@dataclass(frozen=True, slots=True)
class Compaction:
    """One partition merged: its segments before and after, and the time it took."""

    index: str
    events: int
    segments_before: int
    segments_after: int
    seconds: float

    def line(self) -> str:
        return (
            f"{self.index}: {self.events} event(s), {self.segments_before} segments -> "
            f"{self.segments_after} ({self.seconds:.1f} s)"
        )


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """The partitions of periods ended by `before`: those to merge, and how many are
    in one segment already; `indices` counts every index behind the alias."""

    indices: int
    to_merge: list[str]
    events: dict[str, int]
    segments: dict[str, int]
    compact_already: int


def segment_counts(client: Elasticsearch, alias: str) -> dict[str, int]:
    """Each index of `alias` and its primary shards' segment count."""
    stats = client.indices.stats(index=alias, metric="segments", level="indices").body
    return {
        index: int(entry["primaries"].get("segments", {}).get("count", 0))
        for index, entry in stats.get("indices", {}).items()
    }


def plan(client: Elasticsearch, alias: str, *, before: Instant) -> CompactionPlan:
    """What `compact` would merge: the partitions whose period ends at or before
    `before` and that hold more than one segment, oldest first."""
    stored = stored_indices(client, alias)
    ended = ending_before(stored, before)
    counts = segment_counts(client, alias) if ended else {}
    to_merge = [s.index for s in ended if counts.get(s.index, 0) > 1]
    return CompactionPlan(
        indices=len(stored),
        to_merge=to_merge,
        events={s.index: s.docs for s in ended},
        segments=counts,
        compact_already=len(ended) - len(to_merge),
    )


def compact(
    client: Elasticsearch,
    planned: CompactionPlan,
    *,
    on_merged: Callable[[Compaction], None] | None = None,
) -> list[Compaction]:
    """Merge each partition `planned` names into one segment (`plan(...)` first), one
    partition at a time: a merge takes a partition's worth of disk beside it while it
    runs. Searches and writes go on meanwhile."""
    slow = client.options(request_timeout=MERGE_TIMEOUT_S)
    done = []
    for index in planned.to_merge:
        started = time.perf_counter()
        try:
            slow.indices.forcemerge(index=index, max_num_segments=1, wait_for_completion=True)
        except NotFoundError:
            continue  # pruned since the plan: nothing left to merge
        after = segment_counts(client, index).get(index, 0)
        merged = Compaction(
            index=index,
            events=planned.events[index],
            segments_before=planned.segments[index],
            segments_after=after,
            seconds=time.perf_counter() - started,
        )
        done.append(merged)
        if on_merged is not None:
            on_merged(merged)
    return done
