"""An input that goes idle gets every result held back so far: results, progress and
the checkpoint do not wait for more input, whatever chunk boundary the burst ended on."""

import io
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from elasticsearch import Elasticsearch

from session_recall.indexer import (
    Status,
    Submission,
    Writer,
    WriterOptions,
    ingest,
    parse_object,
    read_stream,
)
from session_recall.indexer.checkpoint import load
from session_recall.indexer.chunking import FLUSH, Flush
from session_recall.node import wait_until
from tests.support.ndjson import event, ndjson, stored

pytestmark = pytest.mark.integration

T = TypeVar("T")
CHUNK = 50
# Long enough for any loaded machine; a failing test waits this long, a passing one not.
DEADLINE_S = 30


def _burst_then_idle(items: Iterable[T], resume: threading.Event) -> Iterator[T | Flush]:
    """`items`, then the input is idle (as stdin or a followed file says with a FLUSH)
    until `resume` is set, then it ends."""
    yield from items
    yield FLUSH
    resume.wait(timeout=2 * DEADLINE_S)


@pytest.mark.parametrize("chunks", [1, 2])
def test_a_burst_of_whole_chunks_is_answered_while_the_input_is_idle(
    es: Elasticsearch, alias: str, chunks: int
):
    total = chunks * CHUNK
    submissions = [Submission(parse_object(event(i)).event) for i in range(total)]
    writer = Writer(es, alias, options=WriterOptions(chunk_events=CHUNK))
    resume, answered = threading.Event(), threading.Event()
    results: list[Status] = []

    def consume() -> None:
        for written in writer.write(_burst_then_idle(submissions, resume)):
            results.append(written.result.status)
            if len(results) == total:
                answered.set()

    consumer = threading.Thread(target=consume)
    consumer.start()
    try:
        assert answered.wait(DEADLINE_S), f"{len(results)} of {total} results came back"
        assert results == [Status.INDEXED] * total
        assert not resume.is_set() and consumer.is_alive(), "the input was still idle"
    finally:
        resume.set()
        consumer.join(DEADLINE_S)
    assert not consumer.is_alive()
    assert stored(es, alias) == total


def test_the_checkpoint_reaches_the_end_of_a_burst_while_the_input_is_idle(
    es: Elasticsearch, alias: str, tmp_path: Path
):
    data = ndjson(event(i) for i in range(2 * CHUNK))
    ckpt = tmp_path / "events.ckpt"
    resume = threading.Event()
    outcome: list[object] = []

    def run() -> None:
        lines = _burst_then_idle(read_stream(io.BytesIO(data)), resume)
        try:
            outcome.append(
                ingest(
                    es,
                    alias,
                    lines,
                    dead_letter=tmp_path / "dead.ndjson",
                    checkpoint_path=ckpt,
                    options=WriterOptions(chunk_events=CHUNK),
                )
            )
        except BaseException as err:
            outcome.append(err)

    runner = threading.Thread(target=run)
    runner.start()
    try:
        assert wait_until(
            lambda: ckpt.exists() and load(ckpt).offset == len(data), timeout=DEADLINE_S
        ), "the checkpoint lagged behind what Elasticsearch acknowledged"
        assert not resume.is_set() and runner.is_alive(), "the input was still idle"
    finally:
        resume.set()
        runner.join(DEADLINE_S)
    (summary,) = outcome
    assert not isinstance(summary, BaseException), summary
    assert summary.indexed == 2 * CHUNK
