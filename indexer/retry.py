"""When to try a bulk item again, and how long to wait before doing so."""

import random
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from elasticsearch import ApiError, TransportError
from pydantic import BaseModel, Field

from session_recall.indexer.deadline import Deadline
from session_recall.indexer.errors import WriteUnavailable

T = TypeVar("T")

# Item statuses that say "not now" rather than "never": the node is overloaded (429)
# or a shard is briefly unavailable or failing (5xx). The same document, sent again
# as a create, is idempotent, so retrying them is always safe.
THROTTLED = 429


def is_retryable(status: int) -> bool:
    return status == THROTTLED or status >= 500


class RetryPolicy(BaseModel):
    """Exponential backoff with jitter, bounded by a number of attempts.

    Jitter spreads the retries of concurrent writers that were throttled together, so
    they do not all come back in the same millisecond and get throttled again.
    """

    max_attempts: int = Field(default=10, ge=1)
    initial_backoff: float = Field(default=0.1, ge=0)
    max_backoff: float = Field(default=10.0, ge=0)

    def delays(self) -> Iterator[float]:
        """The wait before each retry: `max_attempts - 1` values."""
        for retry in range(self.max_attempts - 1):
            ceiling = min(self.max_backoff, self.initial_backoff * 2**retry)
            yield random.uniform(ceiling / 2, ceiling)


class Transient(Exception):
    """A failure worth another attempt that the client did not raise itself."""


def call_with_retries(
    func: Callable[[], T],
    *,
    policy: RetryPolicy,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
    deadline: Deadline | None = None,
) -> T:
    """`func()`, again after a backoff while it fails in a way that may pass.

    Raises `WriteUnavailable` once `policy.max_attempts` calls have failed, or when
    `deadline` leaves no time for another (`func` bounds its own request by it).
    """
    delays = policy.delays()
    cause = None
    while True:
        if deadline is not None and not deadline.allows():
            raise past_deadline(what, deadline, cause)
        try:
            return func()
        except (TransportError, Transient) as err:
            cause = type(err).__name__
        except ApiError as err:
            if not is_retryable(err.status_code):
                raise
            cause = f"status {err.status_code}"
        delay = next(delays, None)
        if delay is None:
            raise WriteUnavailable(
                f"Elasticsearch could not {what} after {policy.max_attempts} attempts "
                f"(last: {cause}).",
                hint="Check the cluster's health, then run the same command again.",
            )
        if deadline is not None and not deadline.allows(delay):
            raise past_deadline(what, deadline, cause)
        sleep(delay)


def past_deadline(what: str, deadline: Deadline, cause: str | None) -> WriteUnavailable:
    last = f" (last: {cause})" if cause else ""
    return WriteUnavailable(
        f"Elasticsearch could not {what} within the {deadline.seconds:g} s deadline{last}.",
        hint="It is overloaded or not answering; send the same request again in a few "
        "seconds (it is idempotent).",
    )
