"""A point in time by which an operation, retries included, must be done.

`serve` answers within a deadline whatever Elasticsearch does: the writer and the
erasure stop retrying when no attempt fits in the time left, and each request they
send has its timeout cut to that time, so a hung node costs one deadline, not
attempts times request timeouts.
"""

import time
from dataclasses import dataclass

from elasticsearch import Elasticsearch

# Less time than this left: a request could not be answered in time, so none is sent.
MIN_REQUEST_S = 0.05


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


def bounded(client: Elasticsearch, deadline: Deadline | None) -> Elasticsearch:
    """`client`, with its request timeout cut to the time `deadline` leaves."""
    if deadline is None:
        return client
    return client.options(request_timeout=max(deadline.remaining(), MIN_REQUEST_S))
