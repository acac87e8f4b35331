"""A point in time by which an operation, retries included, must be done.

`serve` answers within a deadline whatever Elasticsearch does: the writer and the
erasure stop retrying when no attempt fits in the time left, and each request they
send has its timeout cut to that time, so a hung node costs one deadline, not
attempts times request timeouts.
"""

import math
import time
import weakref
from dataclasses import dataclass

from elasticsearch import Elasticsearch

# Less time than this left: a request could not be answered in time, so none is sent.
MIN_REQUEST_S = 0.05
# A bounded client's timeout is the time left rounded down to a power of this, so that
# clients can be reused: at most 2% shorter than the time left, never longer.
TIMEOUT_STEP = 1.02
# Bounded clients kept per client: a few cover the 2% steps a batch's requests fall in.
MAX_CLONES = 16


@dataclass(frozen=True, slots=True)
class Deadline:
    seconds: float  # the time it was given, for messages
    at: float  # on the `time.monotonic()` clock

    @classmethod
    def after(cls, seconds: float) -> "Deadline":
        return cls(seconds, time.monotonic() + seconds)

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def allows(self, wait: float = 0.0) -> bool:
        """Waiting `wait` seconds still leaves time for a request."""
        return self.remaining() > wait + MIN_REQUEST_S


# A client's `options()` builds some forty API namespaces, about a millisecond of CPU,
# and `serve`'s writer needs a bounded client three times per batch: each client's
# bounded copies are kept, by timeout (weakly: they go when the client goes).
_clones: "weakref.WeakKeyDictionary[Elasticsearch, dict[float, Elasticsearch]]" = (
    weakref.WeakKeyDictionary()
)


def bounded(client: Elasticsearch, deadline: Deadline | None) -> Elasticsearch:
    """`client`, with its request timeout cut to the time `deadline` leaves (rounded
    down by at most 2%, never under `MIN_REQUEST_S`)."""
    if deadline is None:
        return client
    timeout = request_timeout(deadline.remaining())
    # Threads may race here: the worst case is a copy made twice, or made again.
    clones = _clones.get(client)
    if clones is None:
        clones = _clones.setdefault(client, {})
    clone = clones.get(timeout)
    if clone is None:
        if len(clones) >= MAX_CLONES:
            clones.clear()
        clone = clones[timeout] = client.options(request_timeout=timeout)
    return clone


def request_timeout(remaining: float) -> float:
    """The timeout of a request sent with `remaining` seconds left: at most that, at
    least `MIN_REQUEST_S`, on a grid of powers of `TIMEOUT_STEP`."""
    if remaining <= MIN_REQUEST_S:
        return MIN_REQUEST_S
    grid = TIMEOUT_STEP ** math.floor(math.log(remaining, TIMEOUT_STEP))
    return max(min(grid, remaining), MIN_REQUEST_S)
