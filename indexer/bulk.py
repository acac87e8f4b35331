"""One batch of bulk actions, sent with the official helper; the retrying is ours.

`helpers.streaming_bulk` is called with `raise_on_error=False`, so a failed item is
yielded with its status instead of a `BulkIndexError` at the end of the chunk, and
`raise_on_exception=False`, so an error answer to the whole request (a 429 or a 503,
say) comes back as that status on every item instead of being raised. Its own retry
(`max_retries`) stays off: it would retry only the statuses in `retry_on_status`
(429 by default), never a connection failure, and sleep in its own backoff. Here
429 and 5xx items go back with `RetryPolicy`'s backoff, a connection failure sends
the unanswered items again, and every item ends in a final status or, past the
retry bound, in `WriteUnavailable`; a refusal of the whole request that retrying
cannot fix (a 401 or a 403) ends the batch in an `IndexerError`.
"""

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch, TransportError, helpers

from session_recall.indexer.deadline import Deadline, bounded
from session_recall.indexer.errors import IndexerError
from session_recall.indexer.retry import THROTTLED, Attempts, RetryPolicy, is_retryable

Action = tuple[dict[str, Any], bytes | None]
# An error reason can quote a whole document; a dead-letter line needs the gist only.
_MAX_REASON_CHARS = 500
# Only what the results need: a bulk response of 1,000 items shrinks by half, which
# both sides pay for in CPU (JSON written by Elasticsearch, read here).
_FILTER_PATH = "items.*._index,items.*.status,items.*.error,items.*.result"


@dataclass(frozen=True, slots=True)
class ItemResponse:
    """The final answer for one action."""

    status: int
    index: str | None = None
    result: str | None = None
    error: str | None = None


@dataclass(slots=True)
class BulkStats:
    """Counters a summary reports: how often items went back, and how many were 429s."""

    retries: int = 0
    throttled: int = 0


def send(
    client: Elasticsearch,
    actions: Sequence[Action],
    *,
    policy: RetryPolicy,
    stats: BulkStats,
    sleep: Callable[[float], None] = time.sleep,
    deadline: Deadline | None = None,
    **bulk_params: Any,
) -> list[ItemResponse]:
    """Send `actions` until each has a final status; raise `WriteUnavailable` when the
    retry bound or `deadline` is reached first. The caller's list is never modified."""
    responses: list[ItemResponse | None] = [None] * len(actions)
    pending = list(range(len(actions)))
    attempts = Attempts(
        policy,
        f"complete a bulk request of {len(actions)} action(s)",
        deadline=deadline,
        sleep=sleep,
        hint="Check the cluster's health; events already acknowledged are stored.",
    )
    cause = "throttled"
    while pending:
        attempts.check()
        retry: list[int] = []
        try:
            batch: list[Any] = [actions[i] for i in pending]
            results = helpers.streaming_bulk(
                bounded(client, deadline),
                batch,
                chunk_size=len(pending),
                max_chunk_bytes=sys.maxsize,  # the caller already bounded the batch
                expand_action_callback=_as_is,
                raise_on_error=False,
                raise_on_exception=False,
                filter_path=_FILTER_PATH,
                **bulk_params,
            )
            for position, (_ok, info) in zip(pending, results, strict=True):
                item = next(iter(info.values()))
                status = int(item.get("status", 500))
                if is_retryable(status):
                    stats.throttled += status == THROTTLED
                    cause = f"status {status}"
                    retry.append(position)
                elif "exception" in item:
                    raise _refused(status, item)
                else:
                    responses[position] = _response(status, item)
        except TransportError as err:
            cause = type(err).__name__
            retry = [i for i in pending if responses[i] is None]
        if retry:
            attempts.back_off(cause)
            stats.retries += len(retry)
        pending = retry
    return [r for r in responses if r is not None]


def _as_is(action: Any) -> Any:
    """Actions arrive as (header, pre-serialized body): sizes were measured on them."""
    return action


def _response(status: int, item: dict[str, Any]) -> ItemResponse:
    error = item.get("error")
    if isinstance(error, dict):
        error = f"{error.get('type')}: {error.get('reason')}"
    return ItemResponse(
        status=status,
        index=item.get("_index"),
        result=item.get("result"),
        error=None if error is None else str(error)[:_MAX_REASON_CHARS],
    )


def _refused(status: int, item: dict[str, Any]) -> IndexerError:
    """The whole request was refused for a reason retrying cannot fix (auth, say)."""
    hint = "Check the credentials and their privileges." if status in (401, 403) else None
    reason = str(item.get("error", ""))[:_MAX_REASON_CHARS]
    return IndexerError(f"Elasticsearch refused the bulk request ({status}): {reason}", hint=hint)
