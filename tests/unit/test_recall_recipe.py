"""memory_search's ranking steps beyond fusion: session-level scoring, pseudo-relevance
feedback, and the union of two vector lists. Pure."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.expansion import expansion_terms
from bench.neighbour_scores import with_context
from bench.ranking_steps import Experiment, clauses_of, entity_terms, merged, with_session_prior
from bench.vector_feedback import seeded
from session_recall.recall.fusion import Fused, combined, fuse, ranked
from session_recall.recall.memory_recipe import Recipe
from session_recall.recall.session_scores import with_sessions


def _hit(key: str, score: float, rank: int) -> Fused[str]:
    return Fused(key, rank, None, score)


def test_a_hit_whose_session_holds_other_good_hits_rises_above_a_stray_one():
    fused = [_hit("stray", 0.9, 1), _hit("a1", 0.8, 2), _hit("a2", 0.7, 3), _hit("a3", 0.6, 4)]
    sessions = {"stray": "s1", "a1": "s2", "a2": "s2", "a3": "s2"}
    again = with_sessions(fused, sessions, weight=0.5, top=3)
    assert [f.key for f in again][:2] == ["a1", "a2"]
    # a1: 0.5 * 0.8 + 0.5 * mean(0.8, 0.7, 0.6); the stray hit's session counts 0 twice
    assert again[0].score == pytest.approx(0.4 + 0.35)
    assert {f.key: f.score for f in again}["stray"] == pytest.approx(0.45 + 0.15)


def test_without_a_session_weight_the_fused_order_is_kept():
    fused = [_hit("x", 0.2, 1), _hit("y", 0.9, 2)]
    assert with_sessions(fused, {"x": "s", "y": "t"}, weight=0.0, top=3) == fused


@given(
    st.lists(st.tuples(st.floats(0, 1), st.sampled_from("abc")), min_size=1, max_size=20),
    st.floats(0, 1),
    st.integers(1, 5),
)
def test_session_scores_keep_every_hit_once_within_zero_to_one(hits, weight, top):
    fused = ranked([_hit(f"k{i}", score, i + 1) for i, (score, _) in enumerate(hits)])
    sessions = {f"k{i}": session for i, (_, session) in enumerate(hits)}
    again = with_sessions(fused, sessions, weight=weight, top=top)
    assert sorted(f.key for f in again) == sorted(sessions)
    assert all(-1e-9 <= f.score <= 1 + 1e-9 for f in again)
    assert [f.score for f in again] == sorted((f.score for f in again), reverse=True)


def test_expansion_adds_the_stems_the_best_hits_share_and_the_query_lacks():
    hits = [("pottery class bowl mel", 10.0), ("pottery bowl glaze", 8.0), ("weather rain", 1.0)]
    assert expansion_terms(hits, "mel made", docs=2, terms=2) == ["bowl", "pottery"]
    assert expansion_terms(hits, "mel made", docs=2, terms=0) == []
    assert expansion_terms([], "mel", docs=5, terms=3) == []


def test_two_vector_lists_become_one_each_key_scored_the_mean_of_its_normalised_scores():
    own = [("a", 0.9), ("b", 0.5)]  # a 1, b 0
    context = [("b", 0.8), ("c", 0.6)]  # b 1, c 0
    assert combined(own, context) == [("a", 0.5), ("b", 0.5), ("c", 0.0)]
    assert combined(own) == own
    assert fuse([], combined(own, context))[0].key == "a"


def test_a_recipe_out_of_bounds_is_refused():
    with pytest.raises(ValueError):
        Recipe(session_weight=1.5)
    with pytest.raises(ValueError):
        Experiment(context_only=True)


def test_a_second_round_moves_the_query_towards_its_seeds_at_unit_length():
    moved = seeded([1.0, 0.0], [[0.0, 1.0], [0.0, 1.0]], weight=1.0)
    assert moved == pytest.approx([2**-0.5, 2**-0.5])
    assert seeded([0.6, 0.8], [], weight=1.0) == [0.6, 0.8]
    assert seeded([0.6, 0.8], [[1.0, 0.0]], weight=0.0) == [0.6, 0.8]


def test_a_turn_after_one_near_the_question_borrows_its_score():
    ranking = [("asked", 0.9), ("stray", 0.8), ("answer", 0.7), ("far", 0.5)]  # 1, .75, .5, 0
    before = {"answer": ["asked"], "stray": ["gone"], "far": []}
    again = with_context(ranking, before, lambda key: key, weight=0.5)
    scores = dict(again)
    assert scores["answer"] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)  # 0.75
    assert scores["stray"] == pytest.approx(0.5 * 0.75)  # a turn before it not in the list: 0
    assert [key for key, _ in again] == ["answer", "asked", "stray", "far"]
    assert with_context(ranking, before, lambda key: key, weight=0.0) == ranking


def test_a_session_whose_vector_is_near_the_question_lifts_its_hits():
    fused = [_hit("x", 0.9, 1), _hit("y", 0.8, 2)]
    sessions = {"x": "far", "y": "near"}
    again = with_session_prior(fused, sessions, {"far": 0.2, "near": 0.6}, weight=0.5)
    assert [f.key for f in again] == ["y", "x"]
    assert {f.key: f.score for f in again} == pytest.approx({"y": 0.9, "x": 0.45})
    assert with_session_prior(fused, sessions, {}, weight=0.5) == fused


def test_the_bench_adds_its_steps_through_the_recipes_hooks():
    assert Recipe().vector_models("m") == ["m"] and Recipe().knn_source() == []
    both = Experiment(context_model="c")
    assert both.vector_models("m") == ["m", "c"]
    assert Experiment(context_model="c", context_only=True).vector_models("m") == ["c"]
    assert Experiment(vector_context=0.3).knn_source() == ["context_of"]
    with pytest.raises(StopIteration) as done:  # a hook that searches nothing more
        next(Recipe().keyword([{"_id": "a"}], None))  # type: ignore[arg-type]
    assert done.value.value == [{"_id": "a"}]


def test_the_entity_terms_are_a_questions_names_and_numbers():
    assert entity_terms("Caroline go LGBTQ support group 2022") == ["Caroline", "LGBTQ", "2022"]


def test_a_question_of_several_clauses_is_split_and_its_lists_merged():
    assert clauses_of("What subject have Caroline and Melanie both painted?") == [
        "What subject have Caroline",
        "Melanie both painted?",
    ]
    assert clauses_of("Where did Melanie go camping?") == []
    one = [{"_index": "i", "_id": "a", "_score": 10.0}, {"_index": "i", "_id": "b", "_score": 5.0}]
    two = [{"_index": "i", "_id": "b", "_score": 2.0}]
    assert [(h["_id"], h["_score"]) for h in merged([one, two], 5)] == [("a", 1.0), ("b", 1.0)]
