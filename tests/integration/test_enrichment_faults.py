"""One bad text, or a broken embedder, never stops enrichment, and says so.

A text the embeddings server refuses is set apart from its page and marked without a
vector, with the reason, counted in `embed --status` and `/readyz`; it is not sent
again. Texts are cut to the model's limit. Any failure of the embedder is an outage:
stems and context go on. An embedder that fails to start makes `serve` not ready, with
the reason. A follower whose passes make no progress pauses longer and longer. Pages
are bounded by bytes. After a model change, fresh events get stems and context before
the backfill of old events' vectors.
"""

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.embeddings import EndpointEmbedder, StaticEmbedder, TransformerEmbedder
from session_recall.http import create_app
from session_recall.indexer import Event, Submission, Writer, enrich, follow, pending, refused
from session_recall.indexer.enrichment import CONTEXT_MARK
from session_recall.node import wait_until
from tests.support.embeddings_server import DIMS, MODEL, EmbeddingsServer
from tests.support.recording import RecordingClient

pytestmark = pytest.mark.integration

START = Instant.parse("2026-04-01T09:00:00Z").nanos


def turns(count: int, *, user: str = "f", text: str = "turn {n} about the project", at: int = 0):
    return [
        Event(event_id=f"{user}-{at + n}", user_id=user, session_id="s", type="tool_output",
              text=text.format(n=n), timestamp=Instant(START + (at + n) * 10**9))
        for n in range(count)
    ]  # fmt: skip


def store(es: Elasticsearch, alias: str, events: list[Event]) -> None:
    assert all(w.result.stored for w in Writer(es, alias).write(map(Submission, events)))
    es.indices.refresh(index=alias)


@pytest.fixture
def server():
    started = EmbeddingsServer().start()
    yield started
    started.stop()


_MADE: list[EndpointEmbedder] = []


@pytest.fixture(autouse=True)
def _close_endpoints() -> Iterator[None]:
    """Each test's embedders are closed at its end: a pool left to the garbage collector
    warns in whichever test it is collected."""
    yield
    while _MADE:
        _MADE.pop().close()


def endpoint(server: EmbeddingsServer, **options: object) -> EndpointEmbedder:
    made = EndpointEmbedder(url=server.url, model=MODEL, dims=DIMS, paused_s=0, **options)
    _MADE.append(made)
    return made


def test_a_text_the_server_refuses_is_set_apart_and_never_sent_again(
    es: Elasticsearch, es_url: str, alias: str, server: EmbeddingsServer
):
    server.controls.max_input_chars = 10_000
    events = turns(30)
    events[7] = events[7].model_copy(update={"text": "log line of a tool " * 3_200})  # 60 KB
    store(es, alias, events)
    embedder = endpoint(server, max_chars=100_000)  # the long text goes whole, and is refused

    summary = enrich(es, alias, embedder)
    assert (summary.enriched, summary.refused, summary.embedder_error) == (30, 1, None)
    assert "maximum context length" in (summary.first_refusal or "")
    es.indices.refresh(index=alias)
    assert pending(es, alias, embedder) == 0
    assert refused(es, alias, embedder) == 1
    with_vectors = es.count(index=alias, query={"exists": {"field": "embeddings"}})["count"]
    assert with_vectors == 29
    long_one = es.search(index=alias, query={"term": {"event_id": "f-7"}})["hits"]["hits"][0]
    assert long_one["_source"]["embedding_refused"] == [embedder.model_id]
    assert "maximum context length" in long_one["_source"]["embedding_refusals"][embedder.model_id]

    sent = len(server.controls.inputs)
    assert enrich(es, alias, embedder).missing == 0
    assert len(server.controls.inputs) == sent, "nothing is sent, or billed, again"

    env = {
        "SESSION_RECALL_EMBEDDER": "endpoint", "SESSION_RECALL_EMBEDDINGS_URL": server.url,
        "SESSION_RECALL_EMBEDDINGS_MODEL": MODEL, "SESSION_RECALL_EMBEDDINGS_DIMS": str(DIMS),
    }  # fmt: skip
    status = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, "embed", "--status"],
                                env=env)  # fmt: skip
    assert status.exit_code == 0, status.output
    assert "0 event(s) await enrichment; 1 text(s) the model refused" in status.output


def test_texts_are_cut_to_the_models_input_limit(
    es: Elasticsearch, alias: str, server: EmbeddingsServer
):
    server.controls.max_input_chars = 10_000
    events = turns(3, text="a long tool output line {n} " * 3_000)
    store(es, alias, events)
    summary = enrich(es, alias, endpoint(server, max_chars=9_000))
    assert (summary.refused, summary.vectors) == (0, 3)
    assert max(len(text) for text in server.controls.inputs) <= 9_000


def test_any_failure_of_the_embedder_is_an_outage_and_stems_and_context_go_on(
    es: Elasticsearch, alias: str, tmp_path: Path
):
    store(es, alias, turns(5))
    broken = TransformerEmbedder("e5-small", tmp_path / "no-models-here")  # never fetched
    summary = enrich(es, alias, broken)
    assert summary.enriched == 5 and summary.vectors == 0
    assert summary.embedder_error and "e5-small" in summary.embedder_error
    es.indices.refresh(index=alias)
    marked = es.count(index=alias, query={"term": {"enriched": CONTEXT_MARK}})["count"]
    assert marked == 5, "stems and context are there"
    assert pending(es, alias, broken) == 5, "the vectors are still to come"


def test_serve_is_not_ready_while_its_embedder_cannot_start(
    es_url: str, alias: str, tmp_path: Path
):
    settings = Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=alias, SESSION_RECALL_EMBEDDER="e5-small",
        SESSION_RECALL_MODELS=tmp_path / "no-models-here", SESSION_RECALL_HOME=tmp_path,
    )  # fmt: skip
    with TestClient(create_app(settings)) as web:
        wait_until(lambda: web.get("/readyz").status_code == 503, timeout=60)
        answer = web.get("/readyz").json()
        assert "the embedder failed to start" in answer["reason"], answer
        assert "e5-small" in answer["reason"], answer


def test_readyz_counts_the_texts_the_embedder_refused(
    es_url: str, alias: str, tmp_path: Path, server: EmbeddingsServer
):
    server.controls.max_input_chars = 10_000
    settings = Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=alias, SESSION_RECALL_EMBEDDER="endpoint",
        SESSION_RECALL_EMBEDDINGS_URL=server.url, SESSION_RECALL_EMBEDDINGS_MODEL=MODEL,
        SESSION_RECALL_EMBEDDINGS_DIMS=DIMS, SESSION_RECALL_EMBEDDINGS_MAX_CHARS=100_000,
        SESSION_RECALL_HOME=tmp_path,
    )  # fmt: skip
    body = [e.model_dump(mode="json") for e in turns(4, text="short text {n}")]
    body[2]["text"] = "far too long " * 2_000
    with TestClient(create_app(settings)) as web:
        assert web.post("/v1/events?refresh=wait_for", json=body).status_code == 200
        wait_until(lambda: web.get("/readyz").json().get("embedder_refused") == 1, timeout=60)
        answer = web.get("/readyz").json()
        assert answer["status"] == "ready" and answer.get("enrichment_pending") == 0, answer


class _Pauses(threading.Event):
    """A stop event that records every pause `follow` takes, without waiting it out,
    and is set after `count` of them."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.pauses: list[float] = []
        self._count = count

    def wait(self, timeout: float | None = None) -> bool:
        self.pauses.append(float(timeout or 0))
        if len(self.pauses) >= self._count:
            self.set()
        return self.is_set()


def test_a_follower_whose_passes_make_no_progress_pauses_longer_each_time(
    es: Elasticsearch, alias: str
):
    store(es, alias, turns(3))
    # Every update is refused: the partition takes no writes.
    es.indices.put_settings(index=f"{alias}-*", settings={"index.blocks.write": True})
    try:
        stop = _Pauses(count=5)
        follow(es, alias, None, stop=stop, poll_seconds=0.5)
    finally:
        es.indices.put_settings(index=f"{alias}-*", settings={"index.blocks.write": None})
    assert stop.pauses == [1.0, 2.0, 4.0, 8.0, 16.0]


def test_pages_are_bounded_by_the_bytes_of_their_texts(es: Elasticsearch, alias: str):
    store(es, alias, turns(10, text="{n} " + "word " * 200))  # about 1 KB each
    recording = RecordingClient(es)
    summary = enrich(recording, alias, None, page_bytes=2_500)  # type: ignore[arg-type]
    assert summary.enriched == 10
    assert recording.calls.count("msearch") == 5, "pages of two texts"


def test_after_a_model_change_fresh_events_get_stems_and_context_first(
    es: Elasticsearch, alias: str
):
    store(es, alias, turns(20))
    enrich(es, alias, StaticEmbedder(64))
    fresh = turns(1, text="a fresh question about invoices", at=100)
    store(es, alias, fresh)
    stop = threading.Event()
    # The new model's first page stops the pass: what it did first is what it chose.
    new_model = StaticEmbedder(128)
    summary = enrich(es, alias, new_model, page_size=5,
                     on_progress=lambda s: s.enriched and stop.set(), stop=stop)  # fmt: skip
    assert summary.enriched == 1
    es.indices.refresh(index=alias)
    doc = es.search(index=alias, query={"term": {"event_id": "f-100"}})["hits"]["hits"][0]
    assert CONTEXT_MARK in doc["_source"]["enriched"]
    assert new_model.model_id in doc["_source"]["embedding_models"]


def test_a_server_that_refuses_every_text_is_an_outage_not_refused_texts(
    es: Elasticsearch, alias: str, server: EmbeddingsServer
):
    """A 400 to every request (a model the server does not serve) is no text's fault:
    nothing is marked refused, and the vectors wait for a pass that works."""
    store(es, alias, turns(3))
    server.controls.status = 400
    summary = enrich(es, alias, endpoint(server))
    assert summary.refused == 0 and summary.embedder_error, summary
    assert "every text" in summary.embedder_error
    es.indices.refresh(index=alias)
    assert refused(es, alias, endpoint(server)) == 0
    server.controls.status = None
    assert enrich(es, alias, endpoint(server)).vectors == 3


class _SlowModel:
    """The static model, a little slow and counting its calls: a backfill's cost."""

    def __init__(self) -> None:
        self._model = StaticEmbedder(128)
        self.model_id, self.dims = self._model.model_id, self._model.dims
        self.calls = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.calls += 1
        time.sleep(0.05)
        return self._model.embed(texts)


def test_a_backfill_that_gives_way_to_new_events_still_advances_and_embeds_once(
    es: Elasticsearch, alias: str
):
    """With events stored all the time, a backfill writes a page at each pass and never
    embeds a page it does not write."""
    store(es, alias, turns(60))
    enrich(es, alias, StaticEmbedder(64))
    model = _SlowModel()
    wake = threading.Event()
    passes = 0
    while pending(es, alias, model) and passes < 40:
        wake.set()  # as serve's writes set it, all the time
        enrich(es, alias, model, page_size=10, yield_to=wake)
        passes += 1
    assert pending(es, alias, model) == 0
    assert model.calls <= 6 + 2, "a page embedded once (and the warm-up of none)"
