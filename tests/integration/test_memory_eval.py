"""memory_search's quality on the labelled evaluation set, with the offline default
embedder: hybrid must find what keywords cannot (paraphrases) and lose nothing where
keywords are at their best (exact phrases). The figures are printed (run with -s)
and written in the README."""

import pytest
from elasticsearch import Elasticsearch

from session_recall.embeddings import StaticEmbedder
from session_recall.indexer import Event, Submission, Writer, enrich
from session_recall.recall import Searchers
from tests.support.memory_eval import QUERIES, events, recall_at

pytestmark = pytest.mark.integration

KEY = b"memory-eval-cursor-key-32-bytes!"


@pytest.fixture(scope="module")
def searchers(es: Elasticsearch, module_alias: str) -> Searchers:
    embedder = StaticEmbedder()
    written = Writer(es, module_alias).write(
        Submission(Event.model_validate(event)) for event in events()
    )
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=module_alias)
    enrich(es, module_alias, embedder)  # stems, context and vectors, as ingest and serve do
    es.indices.refresh(index=module_alias)
    return Searchers(es, module_alias, KEY, embedder=embedder)


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
        print("\nrecall@10 on the evaluation set (static embedder):")
        for kind in ("paraphrase", "control"):
            row = ", ".join(
                f"{mode} {figures[mode, kind]:.3f}" for mode in ("keyword", "semantic", "hybrid")
            )
            print(f"  {kind}: {row}")
    assert figures["hybrid", "paraphrase"] >= figures["keyword", "paraphrase"] + 0.20
    assert figures["hybrid", "control"] >= figures["keyword", "control"] - 0.02
