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
