"""One batch of bulk actions, posted as one prebuilt NDJSON body; the retrying is ours.

The body is joined once from each action's serialized header and body (a writer's
documents come serialized already), and the answer is read as far as the results
need (`filter_path`): no per-action pass through a helper that would serialize the
headers again and build a tuple per item. An error answer to the whole request (a
429 or a 503, say) counts as that status for every item. 429 and 5xx items go back
with `RetryPolicy`'s backoff, a connection failure sends the unanswered items again,
and every item ends in a final status or, past the retry bound, in
`WriteUnavailable`; a refusal of the whole request that retrying cannot fix (a 401
or a 403) ends the batch in an `IndexerError`.
"""

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from elasticsearch import ApiError, Elasticsearch, TransportError

from session_recall.indexer.deadline import Deadline, bounded
from session_recall.indexer.errors import IndexerError
from session_recall.indexer.retry import THROTTLED, Attempts, RetryPolicy, is_retryable

# (header, body): the header as a dict or already serialized; no body for a delete.
Action = tuple[dict[str, Any] | bytes, bytes | None]
# An error reason can quote a whole document; a dead-letter line needs the gist only.
_MAX_REASON_CHARS = 500
# Only what the results need: a bulk response of 1,000 items shrinks by more than
# half, which both sides pay for in CPU (JSON written by Elasticsearch, read here).
# Not `_index`: every action names its concrete index, which the caller knows.
_FILTER_PATH = "errors,items.*.status,items.*.error,items.*.result"


@dataclass(frozen=True, slots=True)
class ItemResponse:
    """The final answer for one action."""

    status: int
    result: str | None = None
    error: str | None = None


@dataclass(slots=True)
class BulkStats:
    """Counters a summary reports: how often items went back, and how many were 429s.
    `timed`, when set, is told how long each bulk request took (seconds, the answer
    included), for a latency histogram (`observability.metrics`)."""

    retries: int = 0
    throttled: int = 0
    timed: Callable[[float], None] | None = None


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
    answers = _deliver(
        client,
        len(actions),
        functools.partial(_body, actions),
        creates_only=False,
        policy=policy,
        stats=stats,
        sleep=sleep,
        deadline=deadline,
        bulk_params=bulk_params,
    )
    return [answers[position] for position in range(len(actions))]


def send_creates(
    client: Elasticsearch,
    count: int,
    body_for: Callable[[list[int]], bytes],
    *,
    policy: RetryPolicy,
    stats: BulkStats,
    sleep: Callable[[float], None] = time.sleep,
    deadline: Deadline | None = None,
) -> dict[int, ItemResponse]:
    """Send `count` create actions, whose body for some of their positions (in order)
    `body_for` makes, as `send` does; returns the answers of those not created (a 409,
    say): every other one was. A chunk that stored every event is answered without a
    look at its items (`errors` is false), which is nearly every chunk."""
    return _deliver(
        client,
        count,
        body_for,
        creates_only=True,
        policy=policy,
        stats=stats,
        sleep=sleep,
        deadline=deadline,
        bulk_params={},
    )


def _deliver(
    client: Elasticsearch,
    count: int,
    body_for: Callable[[list[int]], bytes],
    *,
    creates_only: bool,
    policy: RetryPolicy,
    stats: BulkStats,
    sleep: Callable[[float], None],
    deadline: Deadline | None,
    bulk_params: dict[str, Any],
) -> dict[int, ItemResponse]:
    """Every position's final answer; with `creates_only`, those of the items that
    were not created only (a create without an error is a 201, created)."""
    answers: dict[int, ItemResponse] = {}
    pending = list(range(count))
    attempts = Attempts(
        policy,
        f"complete a bulk request of {count} action(s)",
        deadline=deadline,
        sleep=sleep,
        hint="Check the cluster's health; events already acknowledged are stored.",
    )
    cause = "throttled"
    while pending:
        attempts.check()
        retry: list[int] = []
        try:
            errors, items = _post(
                bounded(client, deadline), body_for(pending), bulk_params, stats.timed
            )
            if creates_only and not errors and len(items) == len(pending):
                break  # every one created
            for position, info in zip(pending, items, strict=True):
                (item,) = info.values()
                status = int(item.get("status", 500))
                if status < 300 and "error" not in item:  # most items: decided at once
                    if not creates_only:
                        answers[position] = _answer(status, item.get("result"))
                elif is_retryable(status):
                    stats.throttled += status == THROTTLED
                    cause = f"status {status}"
                    retry.append(position)
                else:
                    answers[position] = _response(status, item)
        except ApiError as err:
            if not is_retryable(err.status_code):
                raise _refused(err.status_code, {"error": str(err)}) from None
            stats.throttled += len(pending) if err.status_code == THROTTLED else 0
            cause = f"status {err.status_code}"
            retry = pending
        except TransportError as err:
            cause = type(err).__name__
            retry = pending
        if retry:
            attempts.back_off(cause)
            stats.retries += len(retry)
        pending = retry
    return answers


def _body(actions: Sequence[Action], positions: list[int]) -> bytes:
    lines: list[bytes] = []
    append = lines.append
    for position in positions:
        header, body = actions[position]
        append(header if isinstance(header, bytes) else orjson.dumps(header))
        if body is not None:
            append(body)
    append(b"")  # every line ends with a newline, the last one included
    return b"\n".join(lines)


def _post(
    client: Elasticsearch,
    body: bytes,
    params: dict[str, Any],
    timed: Callable[[float], None] | None,
) -> tuple[bool, list[dict[str, Any]]]:
    """Whether an item failed, and the items' answers."""
    # The client sends bytes as they are (its NDJSON serializer passes them through);
    # its annotation names only the list form.
    operations: Any = body
    started = time.perf_counter()
    try:
        answer = client.bulk(operations=operations, filter_path=_FILTER_PATH, **params).body
    finally:
        if timed is not None:
            timed(time.perf_counter() - started)
    return bool(answer.get("errors", True)), list(answer.get("items", ()))


def _response(status: int, item: dict[str, Any]) -> ItemResponse:
    error = item.get("error")
    if error is None:
        return _answer(status, item.get("result"))
    if isinstance(error, dict):
        error = f"{error.get('type')}: {error.get('reason')}"
    return ItemResponse(
        status=status,
        result=item.get("result"),
        error=None if error is None else str(error)[:_MAX_REASON_CHARS],
    )


@functools.lru_cache(maxsize=1024)
def _answer(status: int, result: str | None) -> ItemResponse:
    """An answer without an error, shared: a chunk's are a few alike ones (201
    created), and a frozen value is safe to share."""
    return ItemResponse(status=status, result=result)


def _refused(status: int, item: dict[str, Any]) -> IndexerError:
    """The whole request was refused for a reason retrying cannot fix (auth, say)."""
    hint = "Check the credentials and their privileges." if status in (401, 403) else None
    reason = str(item.get("error", ""))[:_MAX_REASON_CHARS]
    return IndexerError(f"Elasticsearch refused the bulk request ({status}): {reason}", hint=hint)
