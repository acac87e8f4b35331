"""Several enrichers on one alias: each event is embedded once, and every context ends
complete. Followers share by leases on slices of the sessions (two in one process,
and two `serve` replicas behind no coordinator), `embed --workers 2` by a slice per
process, with turns stored meanwhile, some of them late.
"""

import os
import random
import subprocess
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.core.index_names import lease_index
from session_recall.core.instant import Instant
from session_recall.embeddings import StaticEmbedder
from session_recall.http import create_app
from session_recall.indexer import Event, Submission, Writer, enrich, follow, pending
from session_recall.indexer.enrichment import Leased
from session_recall.node import wait_until
from tests.support.cli import CLI
from tests.support.contexts import assert_contexts_complete
from tests.support.embeddings_server import DIMS, MODEL, EmbeddingsServer

pytestmark = pytest.mark.integration

START = Instant.parse("2026-03-02T08:00:00Z").nanos


def conversation(users: int, sessions: int, turns: int, *, seed: int) -> list[Event]:
    """Turns with a text of their own each, in a shuffled order of arrival: some are
    stored after turns that follow them."""
    events = [
        Event(event_id=f"u{u}-s{s}-{n}", user_id=f"user-{u}", session_id=f"s{s}",
              type="user_message", text=f"turn {n} of session {s} word w{u}x{s}x{n}",
              timestamp=Instant(START + n * 10**9 + s * 10**6))
        for u in range(users) for s in range(sessions) for n in range(turns)
    ]  # fmt: skip
    random.Random(seed).shuffle(events)
    return events


class CountingEmbedder:
    """The static model, counting each text it embeds."""

    def __init__(self) -> None:
        self._model = StaticEmbedder()
        self.model_id, self.dims = self._model.model_id, self._model.dims
        self.texts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list:
        with self._lock:
            self.texts.update(texts)
        return self._model.embed(texts)


def test_two_followers_share_the_alias_and_embed_each_event_once(es: Elasticsearch, alias: str):
    events = conversation(users=4, sessions=3, turns=8, seed=1)
    embedder = CountingEmbedder()
    stop = threading.Event()
    shares = [Leased(es, alias, ttl_s=10) for _ in range(2)]
    followers = [
        threading.Thread(
            target=follow,
            args=(es, alias, embedder),
            kwargs={"stop": stop, "poll_seconds": 0.1, "share": share},
        )
        for share in shares
    ]
    for thread in followers:
        thread.start()
    try:
        writer = Writer(es, alias)
        for start in range(0, len(events), 12):  # stored in bursts while both follow
            assert all(
                w.result.stored for w in writer.write(map(Submission, events[start : start + 12]))
            )
        es.indices.refresh(index=alias)
        wait_until(lambda: pending(es, alias, embedder) == 0, timeout=120)
        wait_until(lambda: all(share.held for share in shares), timeout=60)
    finally:
        stop.set()
        for thread in followers:
            thread.join(timeout=30)
    assert shares[0].held.isdisjoint(shares[1].held) or not shares[0].held
    twice = {text: n for text, n in embedder.texts.items() if n > 1}
    assert twice == {}, "no page is embedded twice"
    assert len(embedder.texts) == len(events)
    assert assert_contexts_complete(es, alias) == len(events)


@pytest.fixture
def server():
    started = EmbeddingsServer().start()
    yield started
    started.stop()


def _endpoint_env(server: EmbeddingsServer) -> dict[str, str]:
    return {
        "SESSION_RECALL_EMBEDDER": "endpoint", "SESSION_RECALL_EMBEDDINGS_URL": server.url,
        "SESSION_RECALL_EMBEDDINGS_MODEL": MODEL, "SESSION_RECALL_EMBEDDINGS_DIMS": str(DIMS),
    }  # fmt: skip


def test_two_serve_replicas_share_the_enrichment_by_themselves(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path, server: EmbeddingsServer
):
    settings = Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=alias, SESSION_RECALL_HOME=tmp_path,
        **_endpoint_env(server),  # type: ignore[arg-type]
    )  # fmt: skip
    events = conversation(users=3, sessions=2, turns=8, seed=2)
    with TestClient(create_app(settings)) as one, TestClient(create_app(settings)) as two:
        for i, event in enumerate(events):  # behind a load balancer: every other request
            replica = (one, two)[i % 2]
            answer = replica.post("/v1/events", json=event.model_dump(mode="json"))
            assert answer.status_code == 200, answer.text
        es.indices.refresh(index=alias)
        embedder_settings = Settings(ELASTICSEARCH_URL=es_url, **_endpoint_env(server))  # type: ignore[arg-type]
        from session_recall.factories import embedder_for

        embedder = embedder_for(embedder_settings)
        wait_until(lambda: pending(es, alias, embedder) == 0, timeout=120)
    sent = Counter(server.controls.inputs)
    sent.pop("warm up", None)
    assert {text: n for text, n in sent.items() if n > 1} == {}, "no page is embedded twice"
    assert len(sent) == len(events)
    assert assert_contexts_complete(es, alias) == len(events)


def test_embed_workers_split_the_sessions_between_processes(
    es: Elasticsearch, es_url: str, alias: str, server: EmbeddingsServer
):
    events = conversation(users=4, sessions=3, turns=6, seed=3)
    assert all(w.result.stored for w in Writer(es, alias).write(map(Submission, events)))
    es.indices.refresh(index=alias)
    run = subprocess.run(
        [*CLI, "--es-url", es_url, "--index", alias, "embed", "--workers", "2"],
        capture_output=True, text=True, timeout=300, env={**os.environ, **_endpoint_env(server)},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "slice 0/2:" in run.stdout and "slice 1/2:" in run.stdout, run.stdout
    sent = Counter(server.controls.inputs)
    assert {text: n for text, n in sent.items() if n > 1} == {}
    assert len(sent) == len(events)
    assert assert_contexts_complete(es, alias) == len(events)


def test_a_follower_that_starts_after_another_gets_its_share(es: Elasticsearch, alias: str):
    """The first follower takes every slice; a second one, started later, is counted at
    once, and the two end up with halves, never the same slice."""
    first, second = Leased(es, alias, ttl_s=10), Leased(es, alias, ttl_s=10)
    try:
        first.take()
        assert len(first.held) == 16
        second.take()  # counted now; its share comes as the first gives some back
        es.indices.refresh(index=lease_index(alias))
        wait_until(lambda: (first.take(), second.take()) and len(second.held) == 8, timeout=30)
        assert len(first.held) == 8 and first.held.isdisjoint(second.held)
        query = second.take()
        es.indices.refresh(index=alias)
        assert es.count(index=alias, query=query)["count"] == 0  # an empty alias: nothing
    finally:
        first.leave()
        second.leave()


def test_a_follower_without_a_slice_enriches_nothing(es: Elasticsearch, alias: str):
    events = conversation(users=2, sessions=2, turns=3, seed=4)
    assert all(w.result.stored for w in Writer(es, alias).write(map(Submission, events)))
    es.indices.refresh(index=alias)
    holder = Leased(es, alias, ttl_s=10)
    try:
        holder.take()  # all sixteen slices
        newcomer = Leased(es, alias, ttl_s=10)
        within = newcomer.take()  # nothing free yet
        assert newcomer.held == set()
        assert enrich(es, alias, None, within=within).missing == 0
        newcomer.leave()
    finally:
        holder.leave()
