"""Chunks are bounded by count and bytes, keep order, and flush on demand."""

from hypothesis import given
from hypothesis import strategies as st

from session_recall.indexer.chunking import FLUSH, chunks, chunks_and_flushes

_items = st.lists(st.integers(1, 50) | st.just(FLUSH), max_size=200)


@given(_items, st.integers(1, 20), st.integers(1, 120))
def test_chunks_never_exceed_the_count_or_byte_bounds(items, max_count, max_bytes):
    for chunk in chunks(items, max_count=max_count, max_bytes=max_bytes, size=lambda n: n):
        assert 1 <= len(chunk) <= max_count
        assert sum(chunk) <= max_bytes or len(chunk) == 1  # an oversized item travels alone


@given(_items, st.integers(1, 20), st.integers(1, 120))
def test_chunks_keep_every_item_in_order(items, max_count, max_bytes):
    out = list(chunks(items, max_count=max_count, max_bytes=max_bytes, size=lambda n: n))
    assert [n for chunk in out for n in chunk] == [n for n in items if n is not FLUSH]


@given(_items)
def test_a_flush_ends_the_pending_chunk(items):
    # With bounds that never trigger, chunks are exactly the runs between flushes.
    out = list(chunks(items, max_count=10**6, max_bytes=10**9, size=lambda n: n))
    runs: list[list[int]] = [[]]
    for n in items:
        if n is FLUSH:
            runs.append([])
        else:
            runs[-1].append(n)
    assert out == [run for run in runs if run]


def test_chunking_is_lazy():
    def endless():
        n = 0
        while True:
            n += 1
            yield n

    first = next(chunks(endless(), max_count=3, max_bytes=100, size=lambda n: 1))
    assert first == [1, 2, 3]


@given(_items, st.integers(1, 20), st.integers(1, 120))
def test_every_flush_is_passed_on_once_everything_before_it_went_out(items, max_count, max_bytes):
    out = chunks_and_flushes(items, max_count=max_count, max_bytes=max_bytes, size=lambda n: n)
    emitted: list[int] = []
    out_before_each_flush = []
    for x in out:
        if x is FLUSH:
            out_before_each_flush.append(len(emitted))
        else:
            emitted.extend(x)
    in_before_each_flush = [
        sum(1 for n in items[:i] if n is not FLUSH) for i, x in enumerate(items) if x is FLUSH
    ]
    assert out_before_each_flush == in_before_each_flush
    assert emitted == [n for n in items if n is not FLUSH]


def test_a_flush_right_after_a_full_chunk_is_still_passed_on():
    # The burst ends on a chunk boundary: the chunk goes out before the flush is seen,
    # and the flush is what tells a consumer that nothing else is coming for now.
    out = list(chunks_and_flushes([1, 2, 3, FLUSH], max_count=3, max_bytes=100, size=lambda n: 1))
    assert out == [[1, 2, 3], FLUSH]
