"""Node loss under load: a 3-node cluster with 1 replica keeps every event exactly once
and never serves a wrong page while a node is SIGKILLed in the middle of an
`ingest --checkpoint` and a recall loop, then started again."""

import os
import signal
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.core.errors import ErrorKind, SessionRecallError
from session_recall.indexer import Event, Submission, Writer
from session_recall.node import LocalCluster, wait_until
from session_recall.recall import CrossSessionSearcher
from session_recall.templates import install
from tests.support.cli import CLI
from tests.support.elasticsearch import dedicated_cluster, server_pid
from tests.support.ndjson import (
    checkpoint_offset,
    duplicated_event_ids,
    event,
    stored,
    write_ndjson,
)
from tests.support.pages import cursor_pages

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ALIAS = "t-node-loss"
KEY = b"node-loss-test-cursor-key-32byte"
INGESTED = 6_000
READER_EVENTS = 60
PAGE = 10


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with dedicated_cluster(3, prefix=f"t{uuid.uuid4().hex[:6]}-three") as made:
        yield made


def _reader_events() -> list[Event]:
    return [
        Event(
            event_id=f"r-{n}",
            user_id="reader",
            session_id="s",
            timestamp=f"2026-0{4 + n % 3}-{1 + n % 28:02d}T10:{n:02d}:00Z",
            type="user_message",
            text=f"we decided {n}",
        )
        for n in range(READER_EVENTS)
    ]


def _ingested(i: int) -> dict:
    """Event `i` of the ingested file: three months, eleven users."""
    stamp = f"2026-0{1 + i % 3}-{1 + i % 28:02d}T08:00:00.{i:09d}Z"
    return event(i, user=f"u{i % 11}", timestamp=stamp)


class RecallLoop(threading.Thread):
    """Walks the reader's pages until stopped, keeping each answer: a page's ids by
    position in the chain, or the error; a failed page starts the chain again."""

    def __init__(self, searcher: CrossSessionSearcher) -> None:
        super().__init__(daemon=True)
        self.searcher = searcher
        self.stop = threading.Event()
        self.pages: list[tuple[int, list[str]]] = []
        self.errors: list[SessionRecallError] = []
        self.unexpected: list[BaseException] = []

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                position, page = 0, self.searcher.search("we decided")
                while True:
                    self.pages.append((position, [item.event_id for item in page.items]))
                    if page.next_cursor is None or self.stop.is_set():
                        break
                    position += 1
                    page = self.searcher.search("we decided", cursor=page.next_cursor)
            except SessionRecallError as err:
                self.errors.append(err)
            except BaseException as err:  # reported by the test
                self.unexpected.append(err)
                return


def test_a_node_killed_under_load_loses_and_duplicates_nothing(
    cluster: LocalCluster, tmp_path: Path
):
    urls = ",".join(cluster.urls())
    es = make_client(Settings(ELASTICSEARCH_URL=urls))
    install(es, ALIAS, replicas=1)
    assert all(w.result.stored for w in Writer(es, ALIAS).write(map(Submission, _reader_events())))
    es.indices.refresh(index=ALIAS)
    source = write_ndjson(tmp_path / "events.ndjson", map(_ingested, range(INGESTED)))
    ckpt = tmp_path / "events.ckpt"
    args = [*CLI, "--es-url", urls, "--index", ALIAS, "ingest", str(source), "--checkpoint",
            str(ckpt), "--chunk-size", "100"]  # fmt: skip
    loop = RecallLoop(
        CrossSessionSearcher(es, alias=ALIAS, user_id="reader", cursor_key=KEY, page_size=PAGE)
    )
    loop.start()
    ingest = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert wait_until(lambda: checkpoint_offset(ckpt) > 0, timeout=300), (
            "the ingest made no progress"
        )
        victim = cluster.nodes[1]
        os.kill(server_pid(es, victim.name), signal.SIGKILL)
        assert ingest.poll() is None, "the ingest ended before the node was killed"
        assert wait_until(lambda: _nodes(es) == 2, timeout=120)
        pages_before_restart = len(loop.pages)
        cluster.start(on_step=lambda _m: None)  # starts the missing node again
        output = ingest.communicate(timeout=600)[0].decode()
    finally:
        if ingest.poll() is None:
            ingest.kill()
            ingest.communicate()
        loop.stop.set()
        loop.join(timeout=120)
    if ingest.returncode != 0:  # retries ran out during the outage: resume, as a user would
        again = subprocess.run(args, capture_output=True, timeout=600)
        assert again.returncode == 0, output + again.stdout.decode() + again.stderr.decode()
    es.cluster.health(index=ALIAS, wait_for_status="green", timeout="120s")

    assert stored(es, ALIAS) == INGESTED + READER_EVENTS
    assert duplicated_event_ids(es, ALIAS) == []
    assert not loop.unexpected, loop.unexpected
    assert all(err.kind is ErrorKind.UNAVAILABLE for err in loop.errors), loop.errors
    after = cursor_pages(
        CrossSessionSearcher(es, alias=ALIAS, user_id="reader", cursor_key=KEY, page_size=PAGE),
        "we decided",
    )
    assert len(after) == READER_EVENTS // PAGE
    assert loop.pages[pages_before_restart:], "the recall loop ran on during the restart"
    for position, ids in loop.pages:
        assert ids == after[position], f"page {position} answered {ids}"
    es.close()


def _nodes(es: Elasticsearch) -> int:
    try:
        return int(es.cluster.health(timeout="1s").body["number_of_nodes"])
    except Exception:  # the victim's URL may be tried first; the next poll asks again
        return -1
