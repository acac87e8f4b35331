"""The benchmark harness runs end to end in its quick mode, so it does not rot: its two
quick runs, at two sizes each (a heavy run, `scripts/test --heavy`).

No timing is asserted: the numbers depend on the machine. Only that a report and a
plot were written, that they hold numbers, and that the run cleaned up after itself.
"""

import json
import re
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from bench import configuration
from bench.run import main
from session_recall.config import Settings
from session_recall.embeddings.local_models import MODELS, install
from session_recall.indexer import native

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _default_encoder_installed() -> None:
    """The default configuration embeds with the default encoder: its weights are
    fetched first, as `setup` fetches them, wherever these runs are the first to need
    them (`scripts/test --heavy` alone, on a fresh clone)."""
    name = configuration.default_embedder()
    if name in MODELS:
        install(name, Settings().models_folder)


_NUMBER = re.compile(r"\b\d+\.\d{2}\b")


def test_quick_run_writes_a_report_and_a_plot_with_numbers(
    es: Elasticsearch, es_url: str, tmp_path: Path
):
    # Small sizes and few repetitions: whether it runs does not depend on them. The
    # default configuration (enrichment on) runs at the first size only.
    args = ["--quick", "--sizes", "1k", "2k", "--reps", "5", "--enrich-up-to", "1k"]
    assert main([*args, "--es-url", es_url, "--out-dir", str(tmp_path)]) == 0

    report = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    headings = ("## In short", "## Machine", "## Targets", "## Recall latency", "## Ingest")
    assert f"As installed ({configuration.default().label}), at 1k events" in report
    # The Python path's row: beside the native core's where it is built, else alone.
    python_path = configuration.storing_only(native_core=False).label
    row = "storing only, Python path" if native.installed() else "storing only"
    assert f"`ingest` {row} ({python_path})" in report, report
    for heading in (*headings, "## Serve", "## Method"):
        assert heading in report, report
    assert "bare loop" in report and "fill the cores" in report, report
    assert "after an event erasure" in report and "tombstone reads" in report, report
    assert "![latency against history size](latency.png)" in report
    assert len(_NUMBER.findall(report)) > 20, report
    assert (tmp_path / "latency.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")

    results = json.loads((tmp_path / "work" / "results.json").read_text())
    assert [size["heavy_events"] for size in results["sizes"]] == [1_000, 2_000]
    stored = configuration.storing_only(native_core=native.installed())
    for size in results["sizes"]:
        installed = size["heavy_events"] == 1_000
        assert size["ours"]["page0_any"]["p50_ms"] > 0
        assert size["reference"]["page0_any"]["same_as_reference"] is True
        ingest = size["ingest"]
        assert ingest["ours"]["events_per_s"] > 0
        assert ingest["ours"]["peak_rss_mb"] > 0
        assert ingest["ours"]["configuration"] == stored.to_json()
        assert ("python" in ingest) is native.installed()  # else "ours" is the Python path
        assert ingest["loader"]["events_per_s"] > 0
        assert ingest["floor"]["cpu_us_per_event"] > 0
        # After an event's erasure by id, writes read tombstones a batch at a time:
        # one read per event (twice per chunk) would pass the events' count.
        erased = ingest["ours_after_event_erasure"]
        assert erased["events_per_s"] > 0
        assert 0 < erased["tombstone_reads"] < size["dataset"]["events"]
        assert ("default" in ingest) is installed
        assert ingest["recall_on"] == ("default" if installed else "ours")
        if installed:
            default = ingest["default"]
            assert default["configuration"] == configuration.default().to_json()
            assert 0 < default["acknowledged_s"] <= default["seconds"]
        serve = size["serve"]
        assert (
            serve["batches_8"]["units"] == serve["batches_32"]["units"] == size["dataset"]["events"]
        )
        assert serve["batches_32"]["configuration"] == stored.to_json()
        assert ("default_batches_8" in serve) is installed
        if installed:
            assert serve["default_batches_8"]["units"] == size["dataset"]["events"]
            assert serve["enrichment"]["lag_after_load"] is not None
            assert serve["single_1"]["configuration"]["name"] == "default"
        assert serve["batches_8"]["generator_cpu_s"] > 0
        assert serve["single_1"]["p50_ms"] > 0 and serve["recall_8"]["requests_per_s"] > 0
        # Library and HTTP recall alternate in blocks, the same calls on each side.
        library, http = serve["recall_library_1"], serve["recall_1"]
        assert library["blocks"] == http["blocks"] >= 2
        assert library["requests"] == http["requests"] > 0
        assert "latencies_ms" not in http and library["p50_ms"] > 0 and http["p50_ms"] > 0
        recall = serve["recall_8"]
        spent = [recall[f"{who}_cpu_ms_per_request"] for who in ("serve", "node", "generator")]
        assert all(ms > 0 for ms in spent), recall
        # The cores' worth of requests at that cost: derived from the three, not measured.
        cores = results["machine"]["cores_logical"]
        assert recall["cpu_bound_requests_per_s"] == pytest.approx(cores / (sum(spent) / 1000))
    run_id = results["config"]["run_id"]
    assert not es.indices.get(index=f"bench-{run_id}_*", allow_no_indices=True).body
    assert not (tmp_path / "work" / "events-2k.ndjson").exists()


def test_quick_semantic_run_writes_its_section_and_keeps_the_rest(
    es: Elasticsearch, es_url: str, tmp_path: Path
):
    report = tmp_path / "BENCHMARKS.md"
    report.write_text("# Benchmarks\n\nWhat an earlier full run wrote.\n", encoding="utf-8")
    # Small sizes: the default encoder embeds every event, at about 150 events/s here.
    args = ["--semantic", "--quick", "--sizes", "1k", "2k", "--es-url", es_url]
    assert main([*args, "--out-dir", str(tmp_path)]) == 0

    text = report.read_text(encoding="utf-8")
    assert "What an earlier full run wrote." in text
    assert (
        "## Semantic recall" in text and "hybrid (the default) p50 at most 2x keyword p50" in text
    )
    assert f"`ingest` as installed ({configuration.default().label}) acknowledges" in text
    assert len(_NUMBER.findall(text.split("## Semantic recall", 1)[1])) > 10, text
    results = json.loads((tmp_path / "work" / "semantic.json").read_text())
    assert [size["heavy_events"] for size in results["sizes"]] == [1_000, 2_000]
    for size in results["sizes"]:
        assert size["ingest"]["events_per_s"] > 0
        assert size["ingest"]["configuration"]["enrich"] is True, size["ingest"]
        assert 0 < size["ingest"]["acknowledged_s"] <= size["ingest"]["seconds"], size["ingest"]
        assert size["ingest_none"]["configuration"]["embedder"] == "none", size["ingest_none"]
        # What the pass left (none, unless the node refused its updates) is reported.
        assert size["enrichment"]["left"] is not None, size["enrichment"]
        assert all(size["latency"][mode]["p50_ms"] > 0 for mode in ("keyword", "hybrid"))
        static = size["static"]  # the static model, a row labelled beside the default's
        assert static["ingest"]["configuration"]["embedder"] == "static", static["ingest"]
        assert all(static["latency"][mode]["p50_ms"] > 0 for mode in ("keyword", "hybrid"))
    assert (
        f"| 2k | compacted, {configuration.static_model(native_core=native.installed()).label} | "
        in text
    )
    assert not es.indices.get(index="bench-*_sem_*", allow_no_indices=True).body
