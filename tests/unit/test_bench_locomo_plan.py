"""The plan that writes BENCHMARKS.md's LoCoMo section: every row of its "everything
tried" table names a result that a store of the plan is asked for, and every run's
command is one the harness takes."""

import shlex
from pathlib import Path
from typing import Any

import pytest

from bench import locomo, locomo_report
from bench.configuration import default_embedder
from bench.locomo_experiments import OTHER_VARIANTS, OTHER_VARIANTS_DEFAULT, ROWS, RUNS, section
from bench.memory_eval import main, variant

FIXTURE = Path(__file__).parent.parent / "support" / "data" / "locomo"


def _asked(
    modes: tuple[str, ...], variants: tuple[str, ...], weights: tuple[float, ...]
) -> set[str]:
    """The result keys `memory_eval.ask` gives for these."""
    keys = {*modes, *(f"hybrid {name}" for name in variants)}
    keys |= {f"hybrid w={w:g}" for w in weights}
    return keys | ({"hybrid, weight left one out"} if weights else set())


def _planned() -> dict[str, set[str]]:
    default = default_embedder()
    stores = {
        "default": _asked(
            ("keyword", "semantic", "hybrid"), (), locomo_report.WEIGHTS.get(default, ())
        ),
    }
    for name, weights in locomo_report.WEIGHTS.items():
        if name != default:
            variants = OTHER_VARIANTS.get(name, OTHER_VARIANTS_DEFAULT)
            stores[name] = _asked(("semantic", "hybrid"), variants, weights)
    stores |= {run.name: _asked(run.modes, run.variants, ()) for run in RUNS}
    return stores


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.label)
def test_each_row_of_the_table_names_a_result_the_plan_asks_for(row):
    planned = _planned()
    for store, key in row.sources:
        assert key in planned.get(store, set()), (store, key)


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run.name)
def test_each_run_is_a_command_the_harness_takes(
    run, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    for name in run.variants:
        variant(
            name, "m+ctx" if run.context_vectors else None, "m+s" if run.session_vectors else None
        )
    assignment, *command = shlex.split(run.command((7,)))
    assert assignment == f"SESSION_RECALL_EMBEDDER={run.embedder}"
    args = command[command.index("--locomo") :]
    args[1] = str(FIXTURE)
    monkeypatch.delenv("ELASTICSEARCH_URL", raising=False)
    with pytest.raises(SystemExit) as stopped:
        main(args)  # every flag taken: it stops only for the node it has no address of
    assert stopped.value.code == 2
    assert "set ELASTICSEARCH_URL first" in capsys.readouterr().err
    assert "--conversations" not in run.command(locomo.DEV)


def _result(recall_at_10: float, session_hit_at_1: float) -> dict[str, Any]:
    overall = locomo.Scores(0.5, recall_at_10, 0.9, session_hit_at_1, 0.9)
    return {"overall": overall, "categories": {1: overall, 4: overall}, "questions": 4,
            "p50_ms": 1.0, "rows": [], "took": []}  # fmt: skip


def test_the_table_gives_each_rows_range_and_says_what_was_left_out():
    stores = {"default": {"keyword": _result(0.69, 0.63), "hybrid": _result(0.76, 0.71)}}
    runs = {
        "A": {"run": RUNS[0], "results": {"hybrid": _result(0.763, 0.716),
              "hybrid session:0": _result(0.75, 0.705)},
              "enrichment_events_per_s": 180.0, "context_turns_per_s": None},
    }  # fmt: skip

    text = "\n".join(section(stores, runs, locomo.DEV))

    default_row = (
        "| **e5-small, session 0.2 over the 3 best at 0.5: the default (default: `hybrid`; "
        "A: `hybrid`)** | **0.500** | **0.760-0.763** | **0.710-0.716** | **0.900** |"
    )
    assert default_row in text
    assert "| e5-small, plain fusion at 0.5 (A: `session:0`) | 0.500 | 0.750 | 0.705 | " in text
    assert f"{len(ROWS) - 3} rows of the plan are left out" in text
    assert "The default does not reach it: 0.760 turn recall@10 and 0.710 session hit@1" in text
    assert f"`{RUNS[0].command(locomo.DEV)}`" in text and "Enrichment pass 180 events/s." in text
    assert "<summary>Run B" not in text
