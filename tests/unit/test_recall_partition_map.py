"""The first page's windows: where they end, and how the list of partitions is kept."""

from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.instant import Instant
from session_recall.recall.partition_map import PartitionMap, window_ends, window_starts

instants = st.integers(min_value=0, max_value=2**62).map(Instant)


@given(ends=st.lists(instants, max_size=80), since=st.none() | instants)
def test_windows_end_at_the_first_partition_then_at_doubling_counts(ends, since):
    picked = window_ends(ends, since)
    after = sorted({e for e in ends if since is None or e > since})
    assert picked == [after[n - 1] for n in (1, 2, 4, 8, 16, 32, 64) if n <= len(after)]
    assert picked == sorted(set(picked))  # strictly increasing: no window is empty by design


@given(starts=st.lists(instants, max_size=80), since=st.none() | instants)
def test_latest_windows_start_at_the_newest_partition_then_at_doubling_counts(starts, since):
    picked = window_starts(starts, since)
    newest = sorted({s for s in starts if since is None or s > since}, reverse=True)
    assert picked == [newest[n - 1] for n in (1, 2, 4, 8, 16, 32, 64) if n <= len(newest)]
    assert picked == sorted(set(picked), reverse=True)


class _Client:
    """Answers `_field_caps` with the given indices, counting the calls."""

    def __init__(self, indices: list[str] | Exception) -> None:
        self.indices = indices
        self.calls = 0

    def field_caps(self, **_: Any) -> SimpleNamespace:
        self.calls += 1
        if isinstance(self.indices, Exception):
            raise self.indices
        return SimpleNamespace(body={"indices": self.indices})


def test_the_partition_ends_come_from_the_index_names_and_are_kept_for_a_while():
    now = [0.0]
    client = _Client(["ev-2026.03", "ev-2026.01", "ev-000001", "ev-tombstones", "other"])
    partitions = PartitionMap(client, "ev", refresh_s=60, clock=lambda: now[0])  # type: ignore[arg-type]
    ends = partitions.window_ends(None)
    assert ends == [Instant.parse("2026-02-01T00:00:00Z"), Instant.parse("2026-04-01T00:00:00Z")]
    now[0] = 59.0
    client.indices = ["ev-2026.01", "ev-2026.02", "ev-2026.03"]
    assert partitions.window_ends(None) == ends and client.calls == 1
    now[0] = 60.0
    assert partitions.window_ends(Instant.parse("2026-02-01T00:00:00Z")) == [
        Instant.parse("2026-03-01T00:00:00Z"),
        Instant.parse("2026-04-01T00:00:00Z"),
    ]
    assert client.calls == 2
    assert partitions.window_starts(None) == [
        Instant.parse("2026-03-01T00:00:00Z"),
        Instant.parse("2026-02-01T00:00:00Z"),
    ]
