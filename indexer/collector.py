"""The cyclic garbage collector, tuned for the length of a bulk load.

With Python's defaults a load spends a large share of its CPU collecting. Every event's
objects stay alive for a chunk or two (parsed,
then in flight), long enough to be promoted to the oldest generation, and each wave
of promotions set off a full collection, which scanned every object of the process,
the imported libraries' included. Almost none of it is garbage: reference counting
frees an event's objects, the collector is only for cycles.

While a load runs, what existed before it is frozen (never scanned again until the
load ends), and the youngest generation is collected after 50,000 allocations rather
than 700: more than a chunk in flight holds, so a chunk no longer sets off
collections, and still few enough that a cycle of garbage waits a bounded time.
"""

import contextlib
import gc
import threading
from collections.abc import Iterator

_LOAD_THRESHOLD = 50_000

_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] | None = None


@contextlib.contextmanager
def tuned_for_load() -> Iterator[None]:
    """The collector tuned for a bulk load inside the block; as it was after it.
    Nested or concurrent loads share the tuning, undone when the last one ends."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(_LOAD_THRESHOLD, _saved[0]), *_saved[1:])
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                gc.unfreeze()
