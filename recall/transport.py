"""The one place recall talks to Elasticsearch: `search` and `msearch` (`amsearch` on the
async client), nothing that writes.

Engine errors that a caller can act on become domain errors with a next step. With a
`timeout`, every search carries it, so Elasticsearch stops a heavy search there
instead of running it on for a caller that gave up; a search that ran out of time
(`timed_out`: some of its hits may be missing) is an error, never a short page.

The same holds for a shard that is missing (its node left, no copy elsewhere): every
search sets `allow_partial_search_results=false`, so Elasticsearch refuses it rather
than answering with the other shards' hits, and a response that still reports failed
shards is refused here. Either way the caller gets `ShardsUnavailable`, "try again".

Every search also asks for Elasticsearch's pre-filter round (`pre_filter_shard_size=1`):
without it, a search that is not sorted on a field (the latest-match aggregation) would
run on every partition, even those its time range rules out.
"""

from collections.abc import Sequence
from typing import Any

from elasticsearch import ApiError, AsyncElasticsearch, ConnectionTimeout, Elasticsearch
from elasticsearch import ConnectionError as ConnectionFailed

from session_recall.core.access import BLOCKED, blocked_hint, role_hint
from session_recall.core.errors import ElasticsearchUnavailable, ShardsUnavailable
from session_recall.recall.errors import IndexNotFound, SearchRefused

# The pre-filter round runs when a search spans more shards than this.
_PRE_FILTER_ALWAYS = 1


def search(
    client: Elasticsearch,
    *,
    alias: str,
    body: dict[str, Any],
    routing: str | None,
    filter_path: str | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    if timeout is not None:
        body = _with_timeout(body, timeout)
        filter_path = None if filter_path is None else f"{filter_path},timed_out"
    if filter_path is not None:
        filter_path = f"{filter_path},_shards.failed"
    try:
        response = client.search(
            index=alias,
            routing=routing,
            body=body,
            filter_path=filter_path,
            allow_partial_search_results=False,
            pre_filter_shard_size=_PRE_FILTER_ALWAYS,
        )
    except (ApiError, ConnectionFailed, ConnectionTimeout) as err:
        raise _domain_error(err, alias, timeout) from None
    body_out: dict[str, Any] = response.body
    _check_complete(body_out, timeout)
    return body_out


def msearch(
    client: Elasticsearch,
    *,
    alias: str,
    bodies: list[dict[str, Any]],
    routing: str | None,
    timeout: float | None = None,
    indices: Sequence[str | None] | None = None,
    optional: Sequence[bool] | None = None,
) -> list[dict[str, Any]]:
    """Several searches in one round trip; Elasticsearch runs them side by side.

    Each goes to `alias`, or to the index of the alias that `indices` names for it (an
    index from a hit of the alias): such a search skips the other partitions' shards
    altogether, pre-filter round included, and finds nothing if the index has gone.
    A search that `optional` marks finds nothing where it fails (a key without the
    privilege on its index, a shard that did not answer): the others' answer stands."""
    try:
        response = client.msearch(**_msearch_request(alias, bodies, routing, timeout, indices))
    except (ApiError, ConnectionFailed, ConnectionTimeout) as err:
        raise _domain_error(err, alias, timeout) from None
    return _msearch_answers(response.body, alias, timeout, optional)


async def amsearch(
    client: AsyncElasticsearch,
    *,
    alias: str,
    bodies: list[dict[str, Any]],
    routing: str | None,
    timeout: float | None = None,
    indices: Sequence[str | None] | None = None,
    optional: Sequence[bool] | None = None,
) -> list[dict[str, Any]]:
    """`msearch` on the async client. Its sync/async twin: what they share is in
    `_msearch_request` and `_msearch_answers`; the rest differs only by `await`."""
    try:
        request = _msearch_request(alias, bodies, routing, timeout, indices)
        response = await client.msearch(**request)
    except (ApiError, ConnectionFailed, ConnectionTimeout) as err:
        raise _domain_error(err, alias, timeout) from None
    return _msearch_answers(response.body, alias, timeout, optional)


def _msearch_request(
    alias: str,
    bodies: list[dict[str, Any]],
    routing: str | None,
    timeout: float | None,
    indices: Sequence[str | None] | None,
) -> dict[str, Any]:
    searches: list[dict[str, Any]] = []
    for body, index in zip(bodies, indices or [None] * len(bodies), strict=True):
        header: dict[str, Any] = {"allow_partial_search_results": False}
        if index is not None:
            header |= {"index": index, "ignore_unavailable": True}
        searches += [header, body if timeout is None else _with_timeout(body, timeout)]
    return {
        "index": alias,
        "routing": routing,
        "searches": searches,
        "pre_filter_shard_size": _PRE_FILTER_ALWAYS,
    }


def _msearch_answers(
    body: dict[str, Any],
    alias: str,
    timeout: float | None,
    optional: Sequence[bool] | None = None,
) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = body["responses"]
    for n, answer in enumerate(answers):
        if (
            optional is not None
            and optional[n]
            and ("error" in answer or answer.get("_shards", {}).get("failed", 0))
        ):
            answers[n] = {"hits": {"hits": []}}  # the search that may fail found nothing
            continue
        if "error" in answer:  # each search fails on its own, inside a 200 response
            error = answer["error"]
            if _timed_out(error):
                raise _ran_out_of_time(timeout)
            kind = error.get("type", "error") if isinstance(error, dict) else str(error)
            raise _refusal(int(answer.get("status", 500)), kind, alias)
        _check_complete(answer, timeout)
    return answers


def indices(client: Elasticsearch, *, alias: str) -> list[str]:
    """The concrete indices behind `alias`, from `_field_caps` (a read action).

    An `ApiError` (a key without the privilege, say) is the caller's to handle; a node
    that does not answer is `ElasticsearchUnavailable`, as for a search.
    """
    try:
        response = client.field_caps(index=alias, fields="timestamp")
    except (ConnectionFailed, ConnectionTimeout) as err:
        raise _domain_error(err, alias) from None
    found: list[str] = response.body.get("indices", [])
    return found


def _with_timeout(body: dict[str, Any], seconds: float) -> dict[str, Any]:
    return {**body, "timeout": f"{max(1, round(seconds * 1000))}ms"}


def _check_complete(response: dict[str, Any], timeout: float | None) -> None:
    failed = response.get("_shards", {}).get("failed", 0)
    if failed:
        raise ShardsUnavailable(
            f"{failed} shard(s) did not answer the search, so its page would lack hits.",
            hint="Retry in a few seconds: a node may be restarting.",
        )
    if response.get("timed_out"):
        raise _ran_out_of_time(timeout)


def _ran_out_of_time(timeout: float | None) -> ElasticsearchUnavailable:
    limit = f"its {timeout:g} s" if timeout is not None else "its time"
    return ElasticsearchUnavailable(
        f"The search ran past {limit} limit in Elasticsearch.",
        hint="Retry in a few seconds, or narrow the search (fewer terms, a later since).",
    )


def _timed_out(error: object) -> bool:
    """Whether Elasticsearch failed a search because it ran out of time. With partial
    results refused (every search here), a shard's timeout fails the whole search with
    429 and a `search_timeout_exception` root cause, rather than answer `timed_out`."""
    causes = error.get("root_cause") if isinstance(error, dict) else None
    return any(
        isinstance(cause, dict) and cause.get("type") == "search_timeout_exception"
        for cause in causes or []
    )


def _domain_error(err: Exception, alias: str, timeout: float | None = None) -> Exception:
    if isinstance(err, ApiError):
        if isinstance(err.body, dict) and _timed_out(err.body.get("error")):
            return _ran_out_of_time(timeout)
        return _refusal(err.status_code, str(err.error), alias)
    return ElasticsearchUnavailable(
        f"Elasticsearch did not answer the search: {type(err).__name__}.",
        hint="Check ELASTICSEARCH_URL and that the node runs, then retry.",
    )


def _refusal(status: int, kind: str, alias: str) -> Exception:
    # Overload and server errors pass with time; anything else (a key without read
    # privilege, a rejected request) needs someone to act, and retrying will not help.
    if kind == "index_not_found_exception":
        return IndexNotFound(
            f"There is no index or alias {alias!r} to search.",
            hint=f"Check --index (SESSION_RECALL_INDEX), or run "
            f"`session-recall --index {alias} setup`.",
        )
    if status == 503 and kind == "search_phase_execution_exception":
        # With partial results refused, a shard without a live copy ends up here.
        return ShardsUnavailable(
            "A shard of the alias is not available now, so the search cannot see "
            f"every event ({status} {kind}).",
            hint="Retry in a few seconds: a node may be restarting.",
        )
    if kind == BLOCKED:
        return SearchRefused(
            f"Elasticsearch refused the search ({status} {kind}).", hint=blocked_hint(repr(alias))
        )
    if status == 429 or status >= 500:
        return ElasticsearchUnavailable(
            f"Elasticsearch could not run the search now ({status} {kind}).",
            hint="Retry in a few seconds.",
        )
    return SearchRefused(
        f"Elasticsearch refused the search ({status} {kind}).",
        hint=role_hint("recall")
        if status == 403
        else f"Check that the credentials may read {alias!r} (privilege 'read').",
    )


def hits(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The hits of a response; `filter_path` drops the key entirely when there are none."""
    found: list[dict[str, Any]] = response.get("hits", {}).get("hits", [])
    return found
