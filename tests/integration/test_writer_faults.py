"""The writer under real faults: a node that throttles, a cluster that is gone, and
an erasure that lands between a writer's tombstone check and its bulk."""

import logging
import threading
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from indexer import (
    RetryPolicy,
    Scope,
    Status,
    Submission,
    Writer,
    WriterOptions,
    WriteUnavailable,
    parse_object,
)
from indexer.tombstones import record
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.templates import install
from tests.support.elasticsearch import DedicatedNodes
from tests.support.ndjson import event, stored

pytestmark = pytest.mark.integration


def _submissions(events: list[dict]) -> list[Submission]:
    return [Submission(parse_object(e).event) for e in events]


@pytest.mark.slow
def test_real_429s_from_a_tiny_write_queue_are_retried_until_every_event_is_stored(
    dedicated_nodes: DedicatedNodes,
):
    # One write thread and a queue of one: concurrent bulks are refused with 429.
    info = dedicated_nodes.start(
        "tiny-queue", **{"thread_pool.write.size": "1", "thread_pool.write.queue_size": "1"}
    )
    client = make_client(Settings(ELASTICSEARCH_URL=info.url))
    alias = "throttled"
    install(client, alias)
    writers, per_writer = 6, 1_500
    options = WriterOptions(
        chunk_events=25, retry=RetryPolicy(max_attempts=60, initial_backoff=0.02, max_backoff=0.5)
    )
    stats: list[Any] = []
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            writer = Writer(client, alias, options=options)
            events = [event(n * per_writer + i, user=f"w{n}-u{i % 5}") for i in range(per_writer)]
            results = [w.result for w in writer.write(_submissions(events))]
            assert all(r.status is Status.INDEXED for r in results)
            stats.append(writer.stats)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)

    assert errors == []
    assert stored(client, alias) == writers * per_writer
    throttled = sum(s.throttled for s in stats)
    retried = sum(s.retries for s in stats)
    logging.getLogger("tests").info("429s seen: %d, events retried: %d", throttled, retried)
    assert throttled > 0, "the node never answered 429: the test proved nothing"
    assert retried >= throttled
    client.close()


def test_a_cluster_that_does_not_answer_raises_after_the_retry_bound(es: Elasticsearch, alias: str):
    nowhere = make_client(Settings(ELASTICSEARCH_URL="http://127.0.0.1:9"), max_retries=0)
    writer = Writer(
        nowhere, alias, options=WriterOptions(retry=RetryPolicy(max_attempts=3, initial_backoff=0))
    )
    with pytest.raises(WriteUnavailable, match="after 3 attempts"):
        list(writer.write(_submissions([event(1)])))


class _FlakyBulk(Elasticsearch):
    """A seam: the first bulk requests fail with a connection error, then all succeed.

    `streaming_bulk` copies the client with `options()`, which keeps the class, so the
    counter lives on the class."""

    failures_left = 0

    def bulk(self, *args: Any, **kwargs: Any) -> Any:
        if type(self).failures_left > 0:
            type(self).failures_left -= 1
            from elasticsearch import ConnectionError as ESConnectionError

            raise ESConnectionError("injected: connection reset")
        return super().bulk(*args, **kwargs)


def test_a_bulk_lost_on_the_wire_is_sent_again(es_url: str, es: Elasticsearch, alias: str):
    _FlakyBulk.failures_left = 2
    client = _FlakyBulk(es_url)
    writer = Writer(client, alias, options=WriterOptions(retry=RetryPolicy(initial_backoff=0)))
    results = [w.result.status for w in writer.write(_submissions([event(i) for i in range(10)]))]
    assert results == [Status.INDEXED] * 10
    assert writer.stats.retries == 20
    assert stored(es, alias) == 10
    client.close()


class _EraseDuringBulk(Elasticsearch):
    """A seam: the scope is erased (its tombstone written) just before the first bulk
    goes out, after the writer's first tombstone check passed."""

    alias = ""
    scope: Scope | None = None

    def bulk(self, *args: Any, **kwargs: Any) -> Any:
        scope, type(self).scope = type(self).scope, None
        if scope is not None:
            record(self, self.alias, scope)
        return super().bulk(*args, **kwargs)


def test_an_erasure_between_check_and_bulk_is_undone_by_the_second_check(
    es_url: str, es: Elasticsearch, alias: str
):
    _EraseDuringBulk.alias, _EraseDuringBulk.scope = alias, Scope.session("alice", "s-0")
    client = _EraseDuringBulk(es_url)
    events = [event(i) for i in range(150)]  # sessions s-0 and s-1
    results = [w.result for w in Writer(client, alias).write(_submissions(events))]

    assert [r.reason for r in results[:100]] == ["scope erased"] * 100
    assert all(r.status is Status.INDEXED for r in results[100:])
    assert stored(es, alias, session_id="s-0") == 0
    assert stored(es, alias, session_id="s-1") == 50
    client.close()
