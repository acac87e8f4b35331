"""The LoCoMo reader and its scores, on a small conversation of our own in LoCoMo's
format (the real data states no licence and is never in the repository)."""

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench import locomo
from bench.memory_eval import alias_for, main, variant
from bench.ranking_steps import DEFAULT_EXPERIMENT
from bench.zscore_fusion import zscore_fuse, zscored
from session_recall.core.index_names import shared_names

FIXTURE = Path(__file__).parent.parent / "support" / "data" / "locomo"


def _fixture() -> locomo.Conversation:
    [conversation] = locomo.load(FIXTURE, (7,))
    return conversation


def test_turns_become_events_with_the_speaker_the_caption_and_30_s_apart():
    conversation = _fixture()
    assert conversation.user_id == "locomo-7"
    first, *_, band = conversation.events[:4]
    assert first["event_id"] == "D1:1" and first["session_id"] == "session_1"
    assert first["timestamp"] == "2026-03-03T09:00:00Z"
    assert first["text"].startswith("Ana: Morning!")
    assert band["timestamp"] == "2026-03-03T09:01:30Z"
    assert band["text"].endswith("[shares a photo of a saxophone on a stage]")
    assert len(conversation.events) == 8  # the empty session 3 adds none


def test_adversarial_questions_are_left_out():
    assert [q.category for q in _fixture().questions] == [4, 4, 1, 2]


def test_scores_count_turns_and_rank_sessions_by_their_best_hit():
    question = locomo.Question("q", 4, ("D2:3", "D1:4"))
    found = ["D1:1", "D2:3", "D1:2", "D3:1"]
    scores = locomo.scores(found, question)
    assert scores.recall_at_5 == 0.5 and scores.hit_at_10 == 1.0
    assert scores.session_hit_at_1 == 1.0  # session_1 leads, and holds D1:4
    assert locomo.scores(["D3:1", "D2:3"], question).session_hit_at_1 == 0.0
    assert locomo.scores([], question).session_hit_at_5 == 0.0


def test_the_held_out_conversations_are_refused_unless_asked_for(capsys):
    with pytest.raises(SystemExit) as refused:
        main(["--locomo", str(FIXTURE), "--conversations", "26,44"])
    assert refused.value.code == 2
    assert "[44] are held out" in capsys.readouterr().err


def test_the_locomo_section_of_the_report_is_its_own_and_kept_by_the_other_modes():
    """`bench.run` rewrites BENCHMARKS.md and keeps each mode's marked section; the
    LoCoMo tables sit in a section of their own, never inside another mode's (whose
    next run would drop them)."""
    from bench import memory_eval, scale, semantic
    from tests.support.elasticsearch import REPO

    document = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    locomo_section = memory_eval.kept_section(document)
    assert locomo_section is not None and "## memory_search on LoCoMo" in locomo_section
    for other in (scale, semantic):
        assert "LoCoMo" not in (other.kept_section(document) or "")
    rewritten = memory_eval.replace_section("# Benchmarks\n", locomo_section)
    assert memory_eval.kept_section(rewritten) == locomo_section


def test_each_variant_names_its_ranking_steps_and_a_wrong_one_is_refused(capsys):
    recipe, weight = variant("session:0.4:2+prf:6:4:0.2+w=0.45", None)
    assert (recipe.session_weight, recipe.session_top) == (0.4, 2)
    assert (recipe.expansion_terms, recipe.expansion_docs, recipe.expansion_weight) == (6, 4, 0.2)
    assert weight == 0.45 and recipe.context_model is None
    defaults, _ = variant("session+prf", None)
    assert (defaults.session_weight, defaults.session_top, defaults.expansion_terms) == (0.3, 3, 10)
    assert variant("near:0.4", None)[0].vector_context == 0.4
    assert variant("z+w=0.4", None) == (replace(DEFAULT_EXPERIMENT, zscore=True), 0.4)
    assert variant("svec:0.2", None, "e5+session")[0].session_model == "e5+session"
    context, _ = variant("ctx-only", "e5+ctx3")
    assert context.context_model == "e5+ctx3" and context.context_only
    for wrong in ("ctx", "svec", "reranker", "session:a"):
        with pytest.raises(ValueError):
            variant(wrong, None)
    with pytest.raises(SystemExit):
        main(["--locomo", str(FIXTURE), "--conversations", "7", "--variants", "ctx"])
    assert "needs --context-vectors" in capsys.readouterr().err


@given(st.text("0123456789abcdef", min_size=8, max_size=8))
def test_every_alias_of_a_run_is_one_that_setup_accepts(token: str):
    assert shared_names(alias_for(token)) is None


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (
            ["--report", "B.md", "--variants", "session"],
            "--report runs its own plan: leave out --variants",
        ),
        (["--report", "B.md", "--modes", "keyword", "--keep"], "leave out --modes, --keep"),
        (["--report", "B.md", "--context-reach", "1"], "leave out --context-reach"),
        (["--embedders", "minilm"], "--embedders goes with --report"),
        (["--context-reach", "-1"], "--context-reach: a number of turns, 0 or more"),
    ],
)
def test_flags_that_do_not_go_together_are_a_usage_error(
    flags: list[str], said: str, capsys: pytest.CaptureFixture[str]
):
    with pytest.raises(SystemExit) as refused:
        main(["--locomo", str(FIXTURE), "--conversations", "7", *flags])
    assert refused.value.code == 2
    assert said in capsys.readouterr().err


def test_zscore_fusion_standardises_each_list_and_puts_a_missing_hit_at_its_lists_floor():
    keyword = [("a", 10.0), ("b", 6.0), ("c", 2.0)]
    vector = [("c", 0.9), ("d", 0.8), ("a", 0.1)]
    fused = {f.key: f.score for f in zscore_fuse(keyword, vector, dense_weight=0.5)}
    z = 1.5**0.5  # the z of 10, 6 and 2: +1.22, 0, -1.22
    assert fused["a"] == pytest.approx(0.5 * z + 0.5 * zscored(vector)["a"])
    # b is in no vector hit: it counts the vector list's lowest z, a's.
    assert fused["b"] == pytest.approx(0.5 * 0.0 + 0.5 * zscored(vector)["a"])
    assert fused["d"] == pytest.approx(0.5 * -z + 0.5 * zscored(vector)["d"])
    assert zscored([("x", 3.0), ("y", 3.0)]) == {"x": 0.0, "y": 0.0}
