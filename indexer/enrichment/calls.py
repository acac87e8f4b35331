"""How the enrichment calls Elasticsearch: retried as a write is, a refusal told as
ours (naming the enrich role when a privilege is missing)."""

from collections.abc import Callable
from typing import TypeVar

from session_recall.indexer.errors import IndexerError, PrivilegeMissing
from session_recall.indexer.retry import RetryPolicy, call_or_refuse

T = TypeVar("T")
# A follower tries a request a few times only: it tries again at its next pass, and a
# shutdown never waits out a long backoff.
FOLLOW_RETRY = RetryPolicy(max_attempts=3, initial_backoff=0.1, max_backoff=1.0)


def call(func: Callable[[], T], *, policy: RetryPolicy, alias: str, what: str) -> T:
    """`func()` retried as a write is; a refusal a retry cannot fix (a missing
    privilege, a closed index) is an `IndexerError` naming it, never the client's."""
    return call_or_refuse(
        func,
        policy=policy,
        alias=alias,
        what=what,
        role="enrich",
        refused=IndexerError,
        forbidden=PrivilegeMissing,
        hint="Check the alias and the credentials' privileges on it, then run "
        "`session-recall embed` again.",
    )
