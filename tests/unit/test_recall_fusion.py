"""Reciprocal rank fusion, as memory_search's hybrid mode uses it."""

from hypothesis import given
from hypothesis import strategies as st

from session_recall.recall.fusion import RANK_CONSTANT, fuse


def test_a_hit_in_both_rankings_sums_both_reciprocal_ranks():
    [first, *_] = fuse(["a", "b"], ["b", "c"])
    assert first.key == "b"
    assert (first.keyword_rank, first.vector_rank) == (2, 1)
    assert first.score == 1 / (RANK_CONSTANT + 2) + 1 / (RANK_CONSTANT + 1)


def test_a_hit_in_one_ranking_has_no_rank_in_the_other():
    fused = {f.key: f for f in fuse(["a"], ["c"])}
    assert fused["a"].vector_rank is None and fused["c"].keyword_rank is None


def test_ties_go_to_the_keyword_ranking_so_the_order_is_stable():
    assert [f.key for f in fuse(["k"], ["v"])] == ["k", "v"]


def test_one_ranking_alone_keeps_its_order():
    assert [f.key for f in fuse([], ["x", "y", "z"])] == ["x", "y", "z"]
    assert [f.key for f in fuse(["x", "y", "z"], [])] == ["x", "y", "z"]


unique = st.lists(st.integers(0, 40), unique=True, max_size=30)


@given(unique, unique)
def test_every_hit_appears_once_best_score_first(keyword: list[int], vector: list[int]):
    fused = fuse(keyword, vector)
    assert sorted(f.key for f in fused) == sorted(set(keyword) | set(vector))
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True)


@given(unique, unique)
def test_first_in_both_rankings_is_first_overall(keyword: list[int], vector: list[int]):
    if keyword and vector and keyword[0] == vector[0]:
        assert fuse(keyword, vector)[0].key == keyword[0]
