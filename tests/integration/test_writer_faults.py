"""The writer under real faults: a node that throttles, a cluster that is gone, an
erasure that lands between a writer's tombstone check and its bulk, and a write whose
last tombstone check never completes."""

import logging
import threading
from typing import Any

import pytest
from elasticsearch import ConnectionError as ESConnectionError
from elasticsearch import Elasticsearch

from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.indexer import (
    RetryPolicy,
    Scope,
    Status,
    Submission,
    Writer,
    WriterOptions,
    WriteUnavailable,
    erase,
    parse_object,
)
from session_recall.indexer.filling import fill
from session_recall.indexer.tombstones import record
from session_recall.templates import install
from tests.support import native as native_core
from tests.support.elasticsearch import DedicatedNodes
from tests.support.ndjson import event, ndjson, stored
from tests.support.recording import RecordingClient

pytestmark = pytest.mark.integration


def _submissions(events: list[dict]) -> list[Submission]:
    return [Submission(parse_object(e).event) for e in events]


def _stored_statuses(writer: Writer, events: list[dict], core: str) -> list[Status]:
    """`events` written by `writer` on the Python path, or as native batches."""
    if core == "python":
        return [w.result.status for w in writer.write(_submissions(events))]
    filled = fill(writer, ndjson(events), None)
    answers = [results for _, results in writer.write_batches(filled.batches)]
    return [r.status for r in filled.results(answers)]


CORES = ("python", "native")


@pytest.mark.slow
def test_real_429s_from_a_tiny_write_queue_are_retried_until_every_event_is_stored(
    dedicated_nodes: DedicatedNodes,
):
    # One write thread and a queue of one: concurrent bulks are refused with 429. Each
    # write path in turn (one node: starting it is most of the test's time).
    info = dedicated_nodes.start(
        "tiny-queue", **{"thread_pool.write.size": "1", "thread_pool.write.queue_size": "1"}
    )
    client = make_client(Settings(ELASTICSEARCH_URL=info.url))
    for core in CORES:
        if core == "native":
            native_core.require_core()  # after the Python path: skips or fails, saying why
        _throttled_writers_store_everything(client, f"throttled-{core}", core)
    client.close()


def _throttled_writers_store_everything(client: Elasticsearch, alias: str, core: str) -> None:
    install(client, alias)
    writers, per_writer = 6, 300
    options = WriterOptions(
        chunk_events=25, retry=RetryPolicy(max_attempts=60, initial_backoff=0.02, max_backoff=0.5)
    )
    stats: list[Any] = []
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            writer = Writer(client, alias, options=options)
            events = [event(n * per_writer + i, user=f"w{n}-u{i % 5}") for i in range(per_writer)]
            assert _stored_statuses(writer, events, core) == [Status.INDEXED] * per_writer
            stats.append(writer.stats)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)

    assert errors == [], core
    assert stored(client, alias) == writers * per_writer, core
    throttled = sum(s.throttled for s in stats)
    retried = sum(s.retries for s in stats)
    logging.getLogger("tests").info("%s: 429s seen: %d, retried: %d", core, throttled, retried)
    assert throttled > 0, f"{core}: the node never answered 429: the test proved nothing"
    assert retried >= throttled, core


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
            record(self, self.alias, scope, erased_at=Instant.now())
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


# Long enough that each chunk of a test's stream takes the last read, however loaded
# the machine: the path these tests are about.
_ALWAYS_REUSE = 3600.0


def test_in_a_stream_each_chunk_takes_the_last_chunks_second_check_as_its_first(
    es: Elasticsearch, alias: str
):
    recording = RecordingClient(es)
    client: Elasticsearch = recording  # type: ignore[assignment]
    events = [event(i) for i in range(30)]

    def reads(reuse_s: float) -> int:
        recording.calls.clear()
        options = WriterOptions(chunk_events=10, tombstone_reuse_s=reuse_s)
        results = [w.result.status for w in Writer(client, alias, options=options).write(
            _submissions(events)
        )]  # fmt: skip
        assert len(results) == 30
        # Tombstone reads, and the look for the partition each new writer makes once.
        return sum(call in ("indices.exists", "mget") for call in recording.calls)

    # Three chunks: the second and the third take the (c) of the chunk before as (a).
    assert reads(0) - reads(_ALWAYS_REUSE) == 2
    erase(es, alias, Scope.session("alice", "s-9"))  # a tombstone index, of another scope
    assert reads(0) - reads(_ALWAYS_REUSE) == 2


class _EraseBeforeSecondBulk(Elasticsearch):
    """A seam: a whole erasure of `scope` runs just before the second bulk goes out,
    after that chunk's check (a) was taken from the first chunk's check (c)."""

    plain: Elasticsearch | None = None
    alias = ""
    scope: Scope | None = None
    bulks = 0

    def bulk(self, *args: Any, **kwargs: Any) -> Any:
        cls = type(self)
        cls.bulks += 1
        if cls.bulks == 2 and cls.scope is not None and cls.plain is not None:
            erase(cls.plain, cls.alias, cls.scope)
        return super().bulk(*args, **kwargs)


def test_an_erasure_after_the_read_a_chunk_took_from_the_last_is_undone_by_its_own_check(
    es_url: str, es: Elasticsearch, alias: str
):
    seam = _EraseBeforeSecondBulk
    seam.plain, seam.alias, seam.scope, seam.bulks = es, alias, Scope.user("alice"), 0
    client = seam(es_url)
    options = WriterOptions(chunk_events=10, tombstone_reuse_s=_ALWAYS_REUSE)
    events = [event(i) for i in range(30)]
    results = [w.result for w in Writer(client, alias, options=options).write(
        _submissions(events)
    )]  # fmt: skip

    # The first chunk was stored before the erasure (which then removed it); the second
    # was written after it and removed by its own check (c); the third was refused.
    assert all(r.status is Status.INDEXED for r in results[:10])
    assert [r.reason for r in results[10:]] == ["scope erased"] * 20
    assert stored(es, alias, user_id="alice") == 0
    client.close()


class _EraseThenLoseTheCheck(Elasticsearch):
    """A seam: just before the first bulk goes out, a whole erasure of `scope` runs
    (tombstone, refresh, search: it finds nothing yet); right after the bulk, the
    writer's tombstone read (its check (c)) fails, as when the process dies there."""

    plain: Elasticsearch | None = None
    alias = ""
    scope: Scope | None = None
    lose_next_check = False

    def bulk(self, *args: Any, **kwargs: Any) -> Any:
        cls = type(self)
        scope, cls.scope = cls.scope, None
        if scope is not None and cls.plain is not None:
            erase(cls.plain, cls.alias, scope)
        response = super().bulk(*args, **kwargs)
        cls.lose_next_check = scope is not None
        return response

    def mget(self, *args: Any, **kwargs: Any) -> Any:
        if type(self).lose_next_check:
            type(self).lose_next_check = False
            raise ESConnectionError("injected: the check after the bulk never completes")
        return super().mget(*args, **kwargs)


def test_a_replay_removes_what_a_write_whose_last_check_failed_left_behind(
    es_url: str, es: Elasticsearch, alias: str
):
    seam = _EraseThenLoseTheCheck
    seam.plain, seam.alias, seam.scope = es, alias, Scope.user("alice")
    client = seam(es_url)
    events = [event(i) for i in range(20)]
    # One attempt: the failed check is not retried, as if the process died there.
    once = WriterOptions(retry=RetryPolicy(max_attempts=1))
    with pytest.raises(WriteUnavailable, match="read the tombstones"):
        list(Writer(client, alias, options=once).write(_submissions(events)))
    assert stored(es, alias, user_id="alice") == 20, "the leftover this test is about"

    replay = [w.result for w in Writer(es, alias).write(_submissions(events))]

    assert [r.reason for r in replay] == ["scope erased"] * 20
    assert stored(es, alias, user_id="alice") == 0
    client.close()
