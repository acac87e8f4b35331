"""Where the read alias's partitions end in time, as a first page needs it.

Pages run from the oldest match on. A first page has no lower time bound, so one search
for it would run on every partition of a long history, although the oldest one or two
hold its hits. Instead the pager searches growing windows of time: up to the end of the
first partition (from `since`, when given), then of the first 2, 4, 8... partitions,
then with no end, and stops as soon as a window holds the page. Elasticsearch's
pre-filter skips every partition outside a window's range. The windows split time, not
indices, so the page is exactly the one a single search would give.

The chain's `as_of` (the latest match) is looked for the other way round when the last
day has none: from the start of the newest partition on, then of the newest 2, 4, 8...,
then over everything, stopping at the first window with a match: its latest match is
the latest of all.

The list comes from `_field_caps`, which the `read` privilege allows, and is kept for a
minute. Stale or partial is harmless: a partition missing from it is still searched by
the windows that cover its time (the last has no end), and an index whose name is not
a partition's (the single-index layout's) is in every window. A key that may not call
it, or no partitions at all, gives no windows: one search, as before.
"""

import bisect
import time
from collections.abc import Callable, Sequence

from elasticsearch import ApiError, Elasticsearch

from session_recall.core.instant import Instant
from session_recall.core.partitions import Partition, parse_partition
from session_recall.recall import transport

REFRESH_S = 60.0


def window_ends(ends: Sequence[Instant], since: Instant | None) -> list[Instant]:
    """The ends of the windows before the last, open one: the end of the first
    partition after `since`, then of the first 2, 4, 8... of them."""
    return _ends_after(sorted(set(ends)), since)


def window_starts(starts: Sequence[Instant], since: Instant | None) -> list[Instant]:
    """The starts of the latest-match windows before the last, whole one: the start of
    the newest partition, then of the newest 2, 4, 8... (none at or before `since`)."""
    return _starts_after(sorted(set(starts)), since)


def _ends_after(ascending: Sequence[Instant], since: Instant | None) -> list[Instant]:
    """`window_ends` of distinct instants already in ascending order."""
    first = 0 if since is None else bisect.bisect_right(ascending, since)
    return [ascending[first + n - 1] for n in _doubling(len(ascending) - first)]


def _starts_after(ascending: Sequence[Instant], since: Instant | None) -> list[Instant]:
    """`window_starts` of distinct instants already in ascending order."""
    first = 0 if since is None else bisect.bisect_right(ascending, since)
    return [ascending[-n] for n in _doubling(len(ascending) - first)]


def _doubling(count: int) -> list[int]:
    """1, 2, 4, 8... up to `count`: which of `count` items the windows take."""
    picked, n = [], 1
    while n <= count:
        picked.append(n)
        n *= 2
    return picked


class PartitionMap:
    """The partition ends of one alias, read again after `refresh_s` seconds."""

    def __init__(
        self,
        client: Elasticsearch,
        alias: str,
        *,
        refresh_s: float = REFRESH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._alias = alias
        self._refresh_s = refresh_s
        self._clock = clock
        # Distinct and in ascending order, sorted once per read: every first page asks
        # for both, and sorting them each time cost a fifth of a recall's CPU (70
        # partitions, an `Instant` comparison in Python each step).
        self._ends: list[Instant] = []
        self._starts: list[Instant] = []
        self._read_at: float | None = None

    def window_ends(self, since: Instant | None) -> list[Instant]:
        self._refresh()
        return _ends_after(self._ends, since)

    def window_starts(self, since: Instant | None) -> list[Instant]:
        self._refresh()
        return _starts_after(self._starts, since)

    def _refresh(self) -> None:
        now = self._clock()
        if self._read_at is None or now - self._read_at >= self._refresh_s:
            known = self._read()
            self._ends = sorted({p.end for p in known})
            self._starts = sorted({p.start for p in known})
            self._read_at = now

    def _read(self) -> list[Partition]:
        try:
            names = transport.indices(self._client, alias=self._alias)
        except ApiError:  # not allowed, say: page without windows
            return []
        partitions = [parse_partition(self._alias, name) for name in names]
        return [p for p in partitions if p is not None]
