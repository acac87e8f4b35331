"""An event's partition is a pure function of its own timestamp, and its name says
which period it covers."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.instant import Instant
from session_recall.core.partitions import (
    GRANULARITIES,
    PartitionNames,
    parse_partition,
    partition_of,
)

LAST = Instant(2**63 - 1)
STAMPS = st.integers(min_value=0, max_value=LAST.nanos).map(Instant)


@pytest.mark.parametrize(
    ("stamp", "granularity", "index"),
    [
        ("2026-07-31T23:59:59.999999999Z", "month", "a-2026.07"),
        ("2026-08-01T00:00:00Z", "month", "a-2026.08"),
        ("2026-12-31T23:00:00-02:00", "month", "a-2027.01"),  # UTC decides
        ("2026-07-15T00:00:00Z", "year", "a-2026"),
        ("2027-01-01T00:00:00Z", "week", "a-2026.w53"),  # the ISO week's year
        ("1970-01-01T00:00:00Z", "week", "a-1970.w01"),
    ],
)
def test_the_partition_is_named_after_the_utc_period_of_the_timestamp(
    stamp: str, granularity, index: str
):
    assert partition_of("a", Instant.parse(stamp), granularity).index == index


@given(stamp=STAMPS, granularity=st.sampled_from(GRANULARITIES))
def test_the_cached_partition_index_is_the_partitions_name(stamp: Instant, granularity):
    names = PartitionNames("events", granularity)
    # Asked twice: the name kept for the day is the one the partition has.
    for _ in range(2):
        assert names.index(stamp) == partition_of("events", stamp, granularity).index


@given(stamp=STAMPS, granularity=st.sampled_from(GRANULARITIES))
def test_a_partition_covers_the_timestamp_it_was_chosen_for(stamp: Instant, granularity):
    partition = partition_of("events", stamp, granularity)
    assert partition.start <= stamp
    assert stamp < partition.end or partition.end == LAST  # the last one ends with time


@given(stamp=STAMPS, granularity=st.sampled_from(GRANULARITIES))
def test_a_partition_name_parses_back_to_the_same_partition(stamp: Instant, granularity):
    partition = partition_of("events", stamp, granularity)
    assert parse_partition("events", partition.index) == partition


@pytest.mark.parametrize(
    "index",
    ["events-000001", "events-tombstones", "events-2026.13", "events-2026.w54", "other-2026.07"],
)
def test_other_indices_are_not_partitions(index: str):
    assert parse_partition("events", index) is None
