"""The semantic benchmark's section of the report replaces its earlier self only."""

from typing import Any

from bench import configuration
from bench.configuration import Configuration
from bench.semantic import END, START, kept_section, replace_section, section

SECTION = f"{START}\n## Semantic recall\nnew figures\n{END}\n"


def test_a_report_without_the_section_gains_it_at_the_end():
    report = "# Benchmarks\n\nrest\n"
    assert replace_section(report, SECTION) == f"{report}\n{SECTION}"


def test_the_section_is_replaced_in_place_and_the_rest_kept():
    old = f"# Benchmarks\n\n{START}\nold figures\n{END}\n\n## Method\n"
    new = replace_section(old, SECTION)
    assert "old figures" not in new and "new figures" in new and new.endswith("## Method\n")


def test_a_full_run_carries_the_section_over():
    old = f"# Benchmarks\n\nold\n\n{SECTION}"
    assert kept_section(old) == SECTION
    assert kept_section("# Benchmarks\n") is None
    assert replace_section("# Benchmarks\n\nnew full run\n", SECTION).endswith(SECTION)


def _latency(p50: float) -> dict[str, dict[str, float]]:
    return {mode: {"p50_ms": p50, "p95_ms": 2 * p50} for mode in ("keyword", "semantic", "hybrid")}


def _ingest(setup: Configuration, events: int, seconds: float) -> dict[str, Any]:
    return {"events": events, "seconds": seconds, "events_per_s": events / seconds,
            "acknowledged_s": seconds / 2, "acknowledged_events_per_s": 2 * events / seconds,
            "startup_s": 0.01, "configuration": setup.to_json()}  # fmt: skip


def test_the_default_is_measured_and_the_static_model_is_a_row_labelled_beside_it():
    default, static = configuration.default(), configuration.static_model(native_core=True)
    stored = configuration.storing_only(native_core=True)
    size = {
        "heavy_events": 1_000, "events": 1_200,
        "ingest": _ingest(default, 1_200, 8.0), "ingest_none": _ingest(stored, 1_200, 0.5),
        "enrichment": {"seconds": 4.0, "events_per_s": 300.0, "left": 0, "dims": 384},
        "latency": _latency(10.0), "latency_loaded": _latency(12.0),
        "compaction": {"seconds": 1.0, "segments_before": 9},
        "static": {"ingest": _ingest(static, 1_200, 1.0), "latency": _latency(3.0)},
    }  # fmt: skip
    machine = {"date": "today", "cpu_model": "cpu", "cores_logical": 2, "load_average_start": 1}
    results = {"machine": machine, "command": "python -m bench.run --semantic", "reps": 5,
               "warmup": 1, "sizes": [size]}  # fmt: skip

    text = section(results)

    assert f"`ingest` as installed ({default.label}) acknowledges" in text
    assert "| 1k | compacted | 10.00 / 20.00 |" in text
    assert f"| 1k | compacted, {static.label} | 3.00 / 6.00 |" in text
    assert f"`ingest` with the static model configured ({static.label})" in text
    assert "1k, acknowledged at 2,400 events/s, enriched and done at 1,200 events/s" in text
    assert "384-dimension vector" in text  # the default's
