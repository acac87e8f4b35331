"""memory_search's quality on the labelled evaluation set, with the offline default
embedder and each local encoder: hybrid must find what keywords cannot (paraphrases)
and lose nothing where keywords are at their best (exact phrases). The figures are
printed (run with -s) and written in the README.

The local encoders' weights are fetched as a user does, with `session-recall models
fetch` (Maven Central, once per cache), and checked against the pinned digests."""

import subprocess

import pytest
from elasticsearch import Elasticsearch

from session_recall.config import Settings
from session_recall.embeddings import Embedder
from session_recall.factories import embedder_for
from session_recall.indexer import Event, Submission, Writer, enrich
from session_recall.recall import Searchers
from tests.support.cli import CLI
from tests.support.memory_eval import QUERIES, events, recall_at

pytestmark = pytest.mark.integration

KEY = b"memory-eval-cursor-key-32-bytes!"
EMBEDDERS = ("static", "minilm", "e5-small")


@pytest.fixture(scope="module")
def stored(es: Elasticsearch, module_alias: str) -> str:
    written = Writer(es, module_alias).write(
        Submission(Event.model_validate(event)) for event in events()
    )
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=module_alias)
    return module_alias


def _embedder(name: str) -> Embedder:
    if name != "static":
        fetched = subprocess.run(
            [*CLI, "models", "fetch", name],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert fetched.returncode == 0, fetched.stderr
    embedder = embedder_for(Settings(SESSION_RECALL_EMBEDDER=name))
    assert embedder is not None
    return embedder


@pytest.fixture(scope="module", params=EMBEDDERS)
def searchers(request: pytest.FixtureRequest, es: Elasticsearch, stored: str) -> Searchers:
    embedder = _embedder(request.param)
    # Stems, context and this model's vectors, as ingest and serve do (each model's
    # vectors in a field of their own, beside the others').
    enrich(es, stored, embedder)
    es.indices.refresh(index=stored)
    return Searchers(es, stored, KEY, embedder=embedder)


def mean_recall_at_10(searchers: Searchers, mode: str, kind: str) -> float:
    scores = []
    for query in (q for q in QUERIES if q.kind == kind):
        result = searchers.memory(user_id=query.user).search(
            query.text, mode=mode, limit=10, context=0
        )
        assert result.mode == mode, result.notice
        scores.append(recall_at([hit.event.event_id for hit in result.hits], query.relevant))
    return sum(scores) / len(scores)


def test_hybrid_finds_paraphrases_that_keywords_miss_and_keeps_exact_phrases(
    searchers: Searchers, capsys: pytest.CaptureFixture[str]
):
    figures = {
        (mode, kind): mean_recall_at_10(searchers, mode, kind)
        for mode in ("keyword", "semantic", "hybrid")
        for kind in ("paraphrase", "control")
    }
    with capsys.disabled():
        model = searchers.embedder.model_id if searchers.embedder else "none"
        print(f"\nrecall@10 on the evaluation set ({model}):")
        for kind in ("paraphrase", "control"):
            row = ", ".join(
                f"{mode} {figures[mode, kind]:.3f}" for mode in ("keyword", "semantic", "hybrid")
            )
            print(f"  {kind}: {row}")
    assert figures["hybrid", "paraphrase"] >= figures["keyword", "paraphrase"] + 0.20
    assert figures["hybrid", "control"] >= figures["keyword", "control"] - 0.02
