"""Erasure against acknowledgements, the documented rule: an erasure removes the
scope's events stored when it takes stock (whatever their stamps) and those stamped at
or before the instant it was requested. Events stamped after that instant and written
once it took stock are kept, even those acknowledged while the erasure ran."""

import itertools
import threading
from dataclasses import dataclass

import pytest
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.indexer import Scope, Status, Submission, Writer, erase, parse_object
from session_recall.node import wait_until
from tests.support.hooked import HookedClient
from tests.support.ndjson import event

pytestmark = pytest.mark.integration

PRODUCERS = 2
BATCH = 20
# Bounds each producer's loop; far more rounds than the erasure needs.
MAX_ROUNDS = 5_000


@dataclass(frozen=True)
class _Acknowledged:
    event_id: str
    stamp: int
    during_erasure: bool  # written once the erasure took stock, before it returned


def test_events_written_while_an_erasure_runs_are_kept_when_stamped_after_it(
    es: Elasticsearch, alias: str
):
    # Old events make the erasure take many pages, so producers write while it runs.
    old = [Submission(parse_object(event(i, user="alice")).event) for i in range(3_000)]
    assert all(w.result.stored for w in Writer(es, alias).write(old))
    es.indices.refresh(index=alias)
    ids = itertools.count(10_000)
    lock = threading.Lock()
    stop, erasing, took_stock = threading.Event(), threading.Event(), threading.Event()
    acknowledged: list[_Acknowledged] = []
    errors: list[BaseException] = []

    def produce() -> None:
        writer = Writer(es, alias)
        try:
            for _ in range(MAX_ROUNDS):
                if stop.is_set():
                    return
                with lock:
                    numbers = [next(ids) for _ in range(BATCH)]
                batch = [
                    event(n, user="alice", session="live", timestamp=Instant.now().isoformat())
                    for n in numbers
                ]
                during = erasing.is_set() and took_stock.is_set()  # before the write
                submissions = [Submission(parse_object(e).event) for e in batch]
                for written in writer.write(submissions):
                    if written.result.status is Status.INDEXED:
                        acknowledged.append(
                            _Acknowledged(
                                written.result.event_id or "",
                                written.submission.event.timestamp.nanos,
                                during and erasing.is_set(),
                            )
                        )
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=produce) for _ in range(PRODUCERS)]
    for thread in threads:
        thread.start()
    try:
        assert wait_until(lambda: len(acknowledged) >= 100, timeout=60)
        requested = Instant.now()
        erasing.set()
        # The erasure takes stock of what is stored with a point in time.
        hooked = HookedClient(es, after="open_point_in_time", hook=took_stock.set)
        scope = Scope.user("alice")
        result = erase(hooked, alias, scope, at=requested, page_size=100)  # type: ignore[arg-type]
        erasing.clear()
        assert wait_until(lambda: len(acknowledged) >= 200 or bool(errors), timeout=60)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)

    assert errors == []
    assert result.erased_at == requested
    es.indices.refresh(index=alias)
    # Written after the stock was taken, stamped after the erasure: new events. (Those
    # written before it, stamped after the request, were stored when it ran: gone.)
    after = [a for a in acknowledged if a.stamp > requested.nanos and a.during_erasure]
    assert after, "nothing was acknowledged during the erasure"
    kept = _stored_ids(es, alias, [a.event_id for a in after])
    assert kept == {a.event_id for a in after}, "an event written after the stock was removed"
    covered = {"range": {"timestamp": {"lte": requested.to_elasticsearch()}}}
    query = {"bool": {"filter": [{"term": {"user_id": "alice"}}, covered]}}
    assert es.count(index=alias, query=query)["count"] == 0


def _stored_ids(es: Elasticsearch, alias: str, event_ids: list[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(event_ids), 1000):
        batch = event_ids[start : start + 1000]
        response = es.search(
            index=alias,
            query={"terms": {"event_id": batch}},
            size=len(batch),
            source=["event_id"],
        )
        found |= {hit["_source"]["event_id"] for hit in response["hits"]["hits"]}
    return found
