"""Split a stream into bulk-sized chunks, bounded both by count and by bytes.

Elasticsearch refuses requests over `http.max_content_length` (100 MB), and a
huge request holds memory on both sides long before that; a count bound alone does
not help when a few events carry megabytes of text.
"""

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


class Flush:
    """Marker in an input stream: send what is pending now, the input is idle."""

    def __repr__(self) -> str:
        return "FLUSH"


FLUSH = Flush()


def chunks(
    items: Iterable[T | Flush],
    *,
    max_count: int,
    max_bytes: int,
    size: Callable[[T], int],
) -> Iterator[list[T]]:
    """Consecutive, order-keeping chunks of at most `max_count` items and `max_bytes`;
    a `FLUSH` in `items` ends the pending chunk.

    An item larger than `max_bytes` on its own travels alone: splitting it is not
    possible, and refusing it is the caller's decision, not the chunker's.
    """
    for chunk in chunks_and_flushes(items, max_count=max_count, max_bytes=max_bytes, size=size):
        if not isinstance(chunk, Flush):
            yield chunk


def chunks_and_flushes(
    items: Iterable[T | Flush],
    *,
    max_count: int,
    max_bytes: int,
    size: Callable[[T], int],
) -> Iterator[list[T] | Flush]:
    """The chunks of `chunks`, with every `FLUSH` of `items` passed on after the chunk
    it ends, even when nothing was pending.

    A consumer that holds work back (a chunk still in flight) learns that the input
    went idle whatever the burst's length; when it ended on a chunk boundary exactly,
    the chunk went out already and the `FLUSH` is all there is to tell it.
    """
    if max_count < 1 or max_bytes < 1:
        raise ValueError("max_count and max_bytes must be positive")
    pending: list[T] = []
    pending_bytes = 0
    for item in items:
        if isinstance(item, Flush):
            if pending:
                yield pending
                pending, pending_bytes = [], 0
            yield item
            continue
        item_bytes = size(item)
        if pending and pending_bytes + item_bytes > max_bytes:
            yield pending
            pending, pending_bytes = [], 0
        pending.append(item)
        pending_bytes += item_bytes
        if len(pending) == max_count:
            yield pending
            pending, pending_bytes = [], 0
    if pending:
        yield pending
