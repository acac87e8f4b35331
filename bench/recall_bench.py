"""The recall workload, timed through our engine and through the reference algorithm.

Kinds of call, all for the heavy user, ten events a page:

- `page0_any`, `page0_all`, `page0_since`: the first page of the any query, of the all
  query, and of the any query restricted to the newest tenth of the history;
- `page10`: page 10 of the any query, by number;
- `cursor`: the page at depth `cursor_depth` of the any query, by cursor. The cursor is
  obtained once by walking the pages, then the same page is fetched repeatedly with it.
  The reference has no cursor: it gets the same page by number.
"""

import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch

from bench.reference_recall import ReferenceCrossSessionRecall, ReferencePage
from bench.timing import Samples, repeat
from bench.took import TookRecorder
from session_recall.core.instant import Instant
from session_recall.recall import CrossSessionSearcher, RecallPage

KINDS = ("page0_any", "page0_all", "page0_since", "page10", "cursor")
LABELS = {
    "page0_any": "page 0, any",
    "page0_all": "page 0, all",
    "page0_since": "page 0, any + since",
    "page10": "page 10 by number",
    "cursor": "page at depth {depth} by cursor",
}
PAGE_NUMBER = 10


@dataclass(frozen=True)
class Workload:
    user_id: str
    query_any: str
    query_all: str
    since: Instant
    cursor_depth: int = 1000
    page_size: int = 10


@dataclass
class KindResult:
    samples: Samples
    floor: Samples | None = None  # the same requests sent by a bare client
    same_as_reference: bool | None = None
    cost: dict[str, int] | None = None  # reference: sessions, events fetched, requests

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = dict(self.samples.summary())
        if self.floor is not None:
            data["client_floor_p50_ms"] = self.floor.p50()
        if self.same_as_reference is not None:
            data["same_as_reference"] = self.same_as_reference
        if self.cost is not None:
            data.update(self.cost)
        return data


def _calls(workload: Workload) -> dict[str, dict[str, Any]]:
    any_query = {"query": workload.query_any, "match": "any"}
    return {
        "page0_any": any_query,
        "page0_all": {"query": workload.query_all, "match": "all"},
        "page0_since": {**any_query, "since": workload.since},
        "page10": {**any_query, "page": PAGE_NUMBER},
    }


def count_matches(client: Elasticsearch, alias: str, workload: Workload) -> dict[str, int]:
    """How many of the user's events each query matches, counted by Elasticsearch."""

    def count(terms: str, match: str, since: Instant | None = None) -> int:
        filters: list[dict[str, Any]] = [{"term": {"user_id": workload.user_id}}]
        if since is not None:
            filters.append({"range": {"timestamp": {"gte": since.to_elasticsearch()}}})
        phrases = [{"match_phrase": {"text": t.strip()}} for t in terms.split(",") if t.strip()]
        key = "must" if match == "all" else "should"
        query: dict[str, Any] = {"bool": {"filter": filters, key: phrases}}
        if match != "all":
            query["bool"]["minimum_should_match"] = 1
        return int(client.count(index=alias, routing=workload.user_id, query=query)["count"])

    return {
        "history": _history(client, alias, workload.user_id),
        "any": count(workload.query_any, "any"),
        "all": count(workload.query_all, "all"),
        "any_since": count(workload.query_any, "any", workload.since),
    }


def _history(client: Elasticsearch, alias: str, user_id: str) -> int:
    query = {"term": {"user_id": user_id}}
    return int(client.count(index=alias, routing=user_id, query=query)["count"])


class OurRecall:
    """Times `CrossSessionSearcher` with Elasticsearch's `took` for every call.

    The kinds are timed round-robin, each call followed by the same requests sent
    through the bare client, so a burst of load from elsewhere on the machine lands on
    every kind and on both sides alike instead of on whichever ran at that moment.
    """

    def __init__(self, client: Elasticsearch, alias: str, workload: Workload) -> None:
        self._client = client
        self._recorder = TookRecorder(client)
        self._workload = workload
        self.searcher = CrossSessionSearcher(
            self._recorder,  # type: ignore[arg-type]  # a pass-through wrapper
            alias=alias,
            user_id=workload.user_id,
            cursor_key=os.urandom(32),
            page_size=workload.page_size,
        )

    def deep_cursor(self) -> str | None:
        """The cursor of the page at `cursor_depth`, by walking there once; None when the
        query has too few matches to reach it."""
        page = self.searcher.search(self._workload.query_any)
        for _ in range(self._workload.cursor_depth - 1):
            if page.next_cursor is None:
                return None
            page = self.searcher.search(self._workload.query_any, cursor=page.next_cursor)
        self._recorder.take()
        return page.next_cursor

    def calls(self) -> tuple[dict[str, Callable[[], RecallPage]], float]:
        """One call per kind; the cursor kind only when the query reaches that depth.
        Also returns the seconds spent walking to the cursor."""
        search = self.searcher.search
        calls: dict[str, Callable[[], RecallPage]] = {
            kind: functools.partial(search, **arguments)
            for kind, arguments in _calls(self._workload).items()
        }
        started = time.perf_counter()
        cursor = self.deep_cursor()
        walk_s = time.perf_counter() - started
        if cursor is not None:
            query, depth = self._workload.query_any, self._workload.cursor_depth
            calls["cursor"] = functools.partial(search, query, cursor=cursor)
            if _keys(search(query, page=depth).items) != _keys(calls["cursor"]().items):
                raise AssertionError(f"The cursor page differs from page {depth} by number.")
        return calls, walk_s

    def run(self, *, reps: int, warmup: int) -> tuple[dict[str, KindResult], dict[str, Any]]:
        calls, walk_s = self.calls()
        pages: dict[str, RecallPage] = {}
        sent: dict[str, list[dict[str, Any]]] = {}
        for kind, call in calls.items():
            self._recorder.take()
            pages[kind] = call()
            sent[kind] = list(self._recorder.last_requests)
        for _ in range(warmup):
            for call in calls.values():
                call()
        self._recorder.take()
        ours = {kind: Samples() for kind in calls}
        floor = {kind: Samples() for kind in calls}
        for _ in range(reps):
            for kind, call in calls.items():
                ours[kind].latency_ms.append(_time_ms(call))
                took, requests = self._recorder.take()
                ours[kind].took_ms.append(took)
                ours[kind].requests.append(requests)
                floor[kind].latency_ms.append(_time_ms(functools.partial(self._replay, sent[kind])))
        results = {kind: KindResult(samples=ours[kind], floor=floor[kind]) for kind in calls}
        return results, {"pages": pages, "cursor_walk_s": walk_s}

    def _replay(self, requests: list[dict[str, Any]]) -> None:
        for request in requests:
            if "searches" in request:
                self._client.msearch(**request)
            else:
                self._client.search(**request)


def _time_ms(call: Callable[[], object]) -> float:
    begin = time.perf_counter_ns()
    call()
    return (time.perf_counter_ns() - begin) / 1e6


def run_reference(
    client: Elasticsearch,
    alias: str,
    workload: Workload,
    *,
    kinds: tuple[str, ...],
    reps: int,
    budget_s: float,
    ours: dict[str, Any],
) -> dict[str, KindResult]:
    """Time the reference for `kinds`, each for at most `reps` calls or about `budget_s`
    (at least 5 calls), and check it returns the same page as ours."""
    reference = ReferenceCrossSessionRecall(
        client, alias=alias, user_id=workload.user_id, page_size=workload.page_size
    )
    calls = _calls(workload)
    calls["cursor"] = {"query": workload.query_any, "match": "any", "page": workload.cursor_depth}
    results: dict[str, KindResult] = {}
    for kind in kinds:
        if kind not in ours:
            continue  # ours could not reach that page either
        arguments = calls[kind]
        last: list[ReferencePage] = []

        def call(arguments: dict[str, Any] = arguments, last: list[ReferencePage] = last) -> None:
            last[:] = [reference.search(**arguments)]

        samples = repeat(call, reps=reps, warmup=1, budget_s=budget_s, min_reps=5)
        page = last[0]
        results[kind] = KindResult(
            samples=samples,
            same_as_reference=_keys(page.items) == _keys(ours[kind].items),
            cost={"sessions": page.sessions, "fetched": page.fetched, "requests": page.requests},
        )
    return results


def _keys(items: list[Any]) -> list[tuple[str, int, str]]:
    return [(item.session_id, item.timestamp.nanos, item.text) for item in items]
