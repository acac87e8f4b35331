"""The checkpointable position never passes a line whose event is unresolved."""

from hypothesis import given
from hypothesis import strategies as st

from session_recall.indexer.progress import Progress


@given(st.integers(1, 60).flatmap(lambda n: st.permutations(range(n))))
def test_committed_is_the_end_of_the_longest_resolved_prefix(order):
    progress = Progress(committed=0)
    tickets = [progress.open(position=(i + 1) * 10) for i in range(len(order))]
    resolved = set()
    for index in order:
        progress.resolve(tickets[index])
        resolved.add(index)
        prefix = 0
        while prefix in resolved:
            prefix += 1
        assert progress.committed == prefix * 10
    assert progress.unresolved == 0


def test_resolving_a_ticket_twice_is_an_error():
    progress = Progress(committed=0)
    ticket = progress.open(5)
    progress.resolve(ticket)
    try:
        progress.resolve(ticket)
    except ValueError:
        return
    raise AssertionError("a second resolve must fail")


@given(st.data(), st.integers(1, 5))
def test_lines_opened_and_resolved_in_batches_commit_the_resolved_prefix(data, compact_after):
    """Lines opened while others resolve, a chunk's lines resolved at once, the front
    dropped as it is committed: the committed position is still the end of the
    longest resolved prefix, and every ticket still names its own line."""
    progress = Progress(committed=0, compact_after=compact_after)
    opened: list[int] = []
    resolved: set[int] = set()
    for _ in range(data.draw(st.integers(1, 30))):
        for _ in range(data.draw(st.integers(0, 6))):
            opened.append(progress.open(position=(len(opened) + 1) * 10))
        waiting = [ticket for ticket in opened if ticket not in resolved]
        batch = data.draw(st.lists(st.sampled_from(waiting), unique=True)) if waiting else []
        progress.resolve_all(batch)
        resolved.update(batch)
        prefix = 0
        while prefix in resolved:
            prefix += 1
        assert progress.committed == prefix * 10
        assert progress.unresolved == len(opened) - prefix


def test_an_open_ticket_keeps_its_item_while_earlier_ones_are_compacted_away():
    progress = Progress(committed="start", compact_after=2)
    tickets = [progress.open(f"line {i}") for i in range(5)]
    progress.resolve_all(tickets[:3])  # committed past 3 lines: compacted
    assert progress.committed == "line 2"
    assert [progress.item(t) for t in tickets[3:]] == ["line 3", "line 4"]
