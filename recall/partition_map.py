"""Where the read alias's partitions end in time, as a first page needs it.

Pages run from the oldest match on. A first page has no lower time bound, so one search
for it would run on every partition of a long history, although the oldest one or two
hold its hits. Instead the pager searches growing windows of time: up to the end of the
first partition (from `since`, when given), then of the first 2, 4, 8... partitions,
then with no end, and stops as soon as a window holds the page. Elasticsearch's
pre-filter skips every partition outside a window's range. The windows split time, not
indices, so the page is exactly the one a single search would give.

The list comes from `_field_caps`, which the `read` privilege allows, and is kept for a
minute. Stale or partial is harmless: a partition missing from it is still searched by
the windows that cover its time (the last has no end), and an index whose name is not
a partition's (the single-index layout's) is in every window. A key that may not call
it, or no partitions at all, gives no windows: one search, as before.
"""

import time
from collections.abc import Callable, Sequence

from elasticsearch import ApiError, Elasticsearch

from session_recall.core.instant import Instant
from session_recall.core.partitions import parse_partition
from session_recall.recall import transport

REFRESH_S = 60.0


def window_ends(ends: Sequence[Instant], since: Instant | None) -> list[Instant]:
    """The ends of the windows before the last, open one: the end of the first
    partition after `since`, then of the first 2, 4, 8... of them."""
    after = sorted({end for end in ends if since is None or end > since})
    picked, count = [], 1
    while count <= len(after):
        picked.append(after[count - 1])
        count *= 2
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
        self._ends: list[Instant] = []
        self._read_at: float | None = None

    def window_ends(self, since: Instant | None) -> list[Instant]:
        now = self._clock()
        if self._read_at is None or now - self._read_at >= self._refresh_s:
            self._ends = self._read()
            self._read_at = now
        return window_ends(self._ends, since)

    def _read(self) -> list[Instant]:
        try:
            names = transport.indices(self._client, alias=self._alias)
        except ApiError:  # not allowed, say: page without windows
            return []
        partitions = [parse_partition(self._alias, name) for name in names]
        return [p.end for p in partitions if p is not None]
