"""Which concrete index an event lives in: a pure function of its own timestamp.

The same event always lands in the same partition, whenever and however often it is
sent, so `create`'s 409 (which only holds within one index) makes every replay exact:
an event older than every partition, or from a month that rolled by long ago, finds
its own partition again instead of a "current" one.

Partitions are named after the period they cover, in UTC:

| granularity | index                | covers                                  |
| ----------- | -------------------- | --------------------------------------- |
| year        | `<alias>-2026`       | the calendar year                       |
| month       | `<alias>-2026.07`    | the calendar month (the default)        |
| week        | `<alias>-2026.w27`   | the ISO week, Monday to Sunday          |

Names start with the year's digits, which keeps them apart from the tombstone index
(`<alias>-tombstones`) and from the single-index layout's `<alias>-000001`.
"""

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal, get_args

from session_recall.core.instant import Instant

Granularity = Literal["week", "month", "year"]
GRANULARITIES: tuple[Granularity, ...] = get_args(Granularity)
DEFAULT_GRANULARITY: Granularity = "month"

_NANOS_PER_SECOND = 1_000_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SUFFIX = re.compile(r"(?P<year>\d{4})(?:\.(?:(?P<month>\d{2})|w(?P<week>\d{2})))?", re.ASCII)


@dataclass(frozen=True, slots=True)
class Partition:
    """One period's index: events stamped from `start` (inclusive) to `end` (exclusive)."""

    index: str
    granularity: Granularity
    start: Instant
    end: Instant


def _instant(day: date) -> Instant:
    """Midnight UTC of `day`, within the instants an event can carry: the first and
    the last partition end there (a week of 1970 starts in 1969)."""
    moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
    nanos = (moment - _EPOCH) // timedelta(seconds=1) * _NANOS_PER_SECOND
    return Instant.clamped(nanos)


def _bounds(granularity: Granularity, day: date) -> tuple[str, date, date]:
    """The suffix of the period holding `day`, its first day and the next period's."""
    if granularity == "year":
        return f"{day.year:04d}", date(day.year, 1, 1), date(day.year + 1, 1, 1)
    if granularity == "month":
        first = date(day.year, day.month, 1)
        after = date(day.year + day.month // 12, day.month % 12 + 1, 1)
        return f"{day.year:04d}.{day.month:02d}", first, after
    iso_year, week, weekday = day.isocalendar()
    monday = day - timedelta(days=weekday - 1)
    return f"{iso_year:04d}.w{week:02d}", monday, monday + timedelta(days=7)


def partition_of(alias: str, stamp: Instant, granularity: Granularity) -> Partition:
    """The partition an event stamped `stamp` belongs to."""
    day = (_EPOCH + timedelta(seconds=stamp.nanos // _NANOS_PER_SECOND)).date()
    suffix, first, after = _bounds(granularity, day)
    return Partition(f"{alias}-{suffix}", granularity, _instant(first), _instant(after))


class PartitionNames:
    """`partition_of(alias, stamp, granularity).index` for one alias and period, for a
    writer's every event: a period is a whole number of days, so the name is kept per
    day (a file's events share a few), the day read from the instant's UTC text (which
    a parsed instant holds already). Bounded: there are about 107,000 days."""

    __slots__ = ("_alias", "_by_day", "_granularity")

    def __init__(self, alias: str, granularity: Granularity) -> None:
        self._alias = alias
        self._granularity: Granularity = granularity
        self._by_day: dict[str, str] = {}

    def index(self, stamp: Instant) -> str:
        day = stamp.to_elasticsearch()[:10]
        name = self._by_day.get(day)
        if name is None:
            name = self._by_day[day] = partition_of(self._alias, stamp, self._granularity).index
        return name


def parse_partition(alias: str, index: str) -> Partition | None:
    """The partition `index` names, or None for any other index (a legacy one, say)."""
    prefix = f"{alias}-"
    if not index.startswith(prefix):
        return None
    match = _SUFFIX.fullmatch(index[len(prefix) :])
    if match is None:
        return None
    year = int(match["year"])
    try:
        if match["month"] is not None:
            granularity: Granularity = "month"
            day = date(year, int(match["month"]), 1)
        elif match["week"] is not None:
            granularity = "week"
            day = date.fromisocalendar(year, int(match["week"]), 1)
        else:
            granularity = "year"
            day = date(year, 1, 1)
    except ValueError:
        return None
    found = partition_of(alias, _instant(day), granularity)
    return found if found.index == index else None


def index_patterns(alias: str) -> list[str]:
    """What the index template matches: every partition name (years 1970 to 2262)."""
    return [f"{alias}-1*", f"{alias}-2*"]


__all__ = [
    "DEFAULT_GRANULARITY",
    "GRANULARITIES",
    "Granularity",
    "Partition",
    "PartitionNames",
    "index_patterns",
    "parse_partition",
    "partition_of",
]
