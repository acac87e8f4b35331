"""When to try a bulk item again, and how long to wait before doing so."""

import random
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from elasticsearch import ApiError, TransportError
from pydantic import BaseModel, Field

from session_recall.core.access import Role, role_hint
from session_recall.indexer.deadline import Deadline
from session_recall.indexer.errors import IndexerError, WriteUnavailable, refusal_reason

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
    attempts = Attempts(policy, what, deadline=deadline, sleep=sleep)
    while True:
        attempts.check()
        try:
            return func()
        except (TransportError, Transient) as err:
            cause = type(err).__name__
        except ApiError as err:
            if not is_retryable(err.status_code):
                raise
            cause = f"status {err.status_code}"
        attempts.back_off(cause)


class Attempts:
    """The tries of one operation: a backoff between them, bounded by the policy's
    number of attempts and by the deadline, whichever comes first. The one place that
    decides when to give up."""

    def __init__(
        self,
        policy: RetryPolicy,
        what: str,
        *,
        deadline: Deadline | None = None,
        sleep: Callable[[float], None] = time.sleep,
        # Read by a CLI user and by a client of the sidecar alike: no surface's words.
        hint: str = "Check the cluster's health, then try again.",
    ) -> None:
        self._policy = policy
        self._delays = policy.delays()
        self._what = what
        self._deadline = deadline
        self._sleep = sleep
        self._hint = hint
        self._cause: str | None = None

    def check(self) -> None:
        """Before a try: give up when the deadline has passed."""
        if self._deadline is not None and not self._deadline.allows():
            raise past_deadline(self._what, self._deadline, self._cause)

    def back_off(self, cause: str) -> None:
        """After a failed try: wait before the next one, or give up."""
        self._cause = cause
        delay = next(self._delays, None)
        if delay is None:
            raise WriteUnavailable(
                f"Elasticsearch could not {self._what} after {self._policy.max_attempts} "
                f"attempts (last: {cause}).",
                hint=self._hint,
            )
        if self._deadline is not None and not self._deadline.allows(delay):
            raise past_deadline(self._what, self._deadline, cause)
        self._sleep(delay)


def past_deadline(what: str, deadline: Deadline, cause: str | None) -> WriteUnavailable:
    last = f" (last: {cause})" if cause else ""
    return WriteUnavailable(
        f"Elasticsearch could not {what} within the {deadline.seconds:g} s deadline{last}.",
        hint="It is overloaded or not answering; try again in a few seconds (it is idempotent).",
    )


def call_or_refuse(
    func: Callable[[], T],
    *,
    policy: RetryPolicy,
    alias: str,
    what: str,
    role: Role,
    refused: type[IndexerError],
    forbidden: type[IndexerError],
    hint: str,
    sleep: Callable[[float], None] = time.sleep,
    deadline: Deadline | None = None,
) -> T:
    """`func()` retried as a write is (`call_with_retries`); a refusal a retry cannot
    fix is an error of ours naming what was refused and why, never the client's: a
    missing privilege (403) is `forbidden`, naming the `role` the work needs; any
    other refusal is `refused`, with `hint`."""
    try:
        return call_with_retries(func, policy=policy, what=what, sleep=sleep, deadline=deadline)
    except ApiError as err:
        message = f"Elasticsearch refused to {what} of {alias!r}: {refusal_reason(err)}."
        if err.status_code == 403:
            raise forbidden(message, hint=role_hint(role)) from None
        raise refused(message, hint=hint) from None
