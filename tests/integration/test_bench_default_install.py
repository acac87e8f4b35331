"""The benchmark's default install really runs its encoder: `ingest`, run as the
benchmark runs it (a home folder of its own), enriches every event with the weights
`session-recall setup` fetched for the user running the benchmark."""

import json
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from bench import configuration, ingest_bench
from session_recall.config import Settings
from session_recall.factories import embedder_for
from session_recall.indexer import pending
from tests.support.models import shared_models
from tests.support.ndjson import event

pytestmark = [pytest.mark.integration, pytest.mark.default_encoder]

EVENTS = 10


def test_the_default_ingest_enriches_with_the_weights_of_the_users_home(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    default = configuration.default()
    user_home = tmp_path / "user"
    user_home.mkdir()
    (user_home / "models").symlink_to(shared_models(default.embedder), target_is_directory=True)
    monkeypatch.setenv("SESSION_RECALL_HOME", str(user_home))  # where setup put the weights
    monkeypatch.delenv("SESSION_RECALL_MODELS", raising=False)
    events = tmp_path / "events.ndjson"
    events.write_text("".join(json.dumps(event(i)) + "\n" for i in range(EVENTS)), "utf-8")
    bench_home = tmp_path / "bench-home"
    bench_home.mkdir()

    default.check()
    run = ingest_bench.run_ours(es_url, alias, events, EVENTS, bench_home, default)

    assert run.extra["configuration"]["embedder"] == default.embedder
    es.indices.refresh(index=alias)
    embedder = embedder_for(Settings(SESSION_RECALL_EMBEDDER=default.embedder))
    assert es.count(index=alias)["count"] == EVENTS
    assert pending(es, alias, embedder) == 0, run.output
