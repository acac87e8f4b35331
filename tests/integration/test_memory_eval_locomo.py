"""The LoCoMo harness (`python -m bench.memory_eval`) end to end on the real node, on a
small conversation of our own in LoCoMo's format."""

import re
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from bench import locomo, locomo_experiments, locomo_report, memory_eval
from bench.configuration import default_embedder
from bench.memory_eval import MODES, evaluate, table
from session_recall.config import Settings
from session_recall.recall import memory_query
from tests.support.models import shared_models

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parent.parent / "support" / "data" / "locomo"


def test_the_harness_stores_a_conversation_and_scores_every_mode(
    es: Elasticsearch, es_url: str, tmp_path: Path
):
    settings = Settings(ELASTICSEARCH_URL=es_url, SESSION_RECALL_HOME=tmp_path)
    conversations = locomo.load(FIXTURE, (7,))

    logged: list[str] = []
    results = evaluate(es, settings, conversations, MODES, log=logged.append)

    assert set(results) == set(MODES)
    keyword = results["keyword"]
    assert keyword["questions"] == 4
    # Each question shares a word with its answer ("Pepper", "band", "bake"...): keyword
    # search finds every one among ten hits of eight turns.
    assert keyword["overall"].hit_at_10 == 1.0
    assert "| keyword | all | 4 |" in table(results)
    _dropped(es, "\n".join(logged), runs=1)


def test_the_context_reach_reaches_the_enrichment_pass_and_is_put_back(
    es: Elasticsearch, es_url: str, tmp_path: Path
):
    settings = Settings(ELASTICSEARCH_URL=es_url, SESSION_RECALL_HOME=tmp_path)
    conversations = locomo.load(FIXTURE, (7,))
    before = memory_eval.reach_module().CONTEXT_REACH

    with (
        memory_eval.context_reach(0),
        memory_eval.loaded(es, settings, conversations, log=lambda _t: None) as store,
    ):
        alias = store.searchers.alias
        hits = es.search(index=alias, size=20, source=["stems", "context"])["hits"]["hits"]

    # Reach 0: an event's context is its own stems, no turn beside it.
    assert len(hits) == 8
    assert all(hit["_source"]["context"] == hit["_source"]["stems"] for hit in hits)
    assert before == memory_eval.reach_module().CONTEXT_REACH


def test_the_report_mode_writes_the_locomo_section_from_its_own_runs(
    es: Elasticsearch,
    es_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    default = default_embedder()
    monkeypatch.setenv("ELASTICSEARCH_URL", es_url)
    monkeypatch.setenv("SESSION_RECALL_HOME", str(tmp_path))
    monkeypatch.setenv("SESSION_RECALL_MODELS", str(shared_models(default)))
    monkeypatch.delenv("SESSION_RECALL_EMBEDDER", raising=False)
    report = tmp_path / "BENCHMARKS.md"
    report.write_text("# Benchmarks\n\nWhat the other benchmarks wrote.\n", encoding="utf-8")
    boosts, reach = dict(memory_query.KEYWORD_BOOSTS), memory_eval.reach_module().CONTEXT_REACH

    args = ["--locomo", str(FIXTURE), "--conversations", "7", "--report", str(report)]
    assert memory_eval.main([*args, "--embedders", "static"]) == 0

    text = report.read_text(encoding="utf-8")
    assert "What the other benchmarks wrote." in text
    section = memory_eval.kept_section(text)
    assert section is not None
    assert "`python -m bench.memory_eval --locomo PATH/locomo --conversations 7" in section
    assert f"### The default: `{default}`" in section
    assert "| keyword (text, stems, context) | " in section and "(its own)** |" in section
    for variant in locomo_report.VARIANTS:
        assert f"| {variant.name} | {variant.flags(reach)} | " in section, variant
    assert "4 questions of categories 1 to 4" in section
    # The ranking experiments: each run of the default's embedder, with its command, and
    # the table's rows from them and from the stores above.
    for run in locomo_experiments.RUNS:
        assert f"`{run.command((7,))}`" in section, run.name
    assert "| **e5-small, session 0.2 over the 3 best at 0.5: the default (default: `hybrid`; " \
        "A: `hybrid`; B: `hybrid`; C: `hybrid`; D: `hybrid`)** | " in section  # fmt: skip
    assert "| static, plain fusion (static: `session:0`) | " in section
    assert "| `static` | semantic | " in section
    assert "| minilm, " not in section and "rows of the plan are left out" in section
    assert boosts == memory_query.KEYWORD_BOOSTS, "the plan's boosts were not put back"
    assert reach == memory_eval.reach_module().CONTEXT_REACH
    # The default's, reach 1, 2 and 5, static's, and each run's.
    _dropped(es, capsys.readouterr().err, runs=5 + len(locomo_experiments.RUNS))


def _dropped(es: Elasticsearch, log: str, runs: int) -> None:
    """Every alias the harness logged it stored into is gone (others' runs on the shared
    node may hold aliases of the same prefix meanwhile)."""
    aliases = re.findall(r" in (bench-locomo-r[0-9a-f]{8})\b", log)
    assert len(aliases) == runs, log
    for alias in aliases:
        assert not es.indices.exists_alias(name=alias), f"{alias} left behind"
