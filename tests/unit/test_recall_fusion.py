"""Score fusion, as memory_search's hybrid mode uses it."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.recall.fusion import DEFAULT_DENSE_WEIGHT, dense_weight_for, fuse


def _ranked(keys: list[str], scores: list[float]) -> list[tuple[str, float]]:
    return list(zip(keys, scores, strict=True))


def test_each_list_is_normalised_then_weighed():
    keyword = _ranked(["a", "b", "c"], [12.0, 7.0, 2.0])  # a 1, b 0.5, c 0
    vector = _ranked(["b", "d"], [0.9, 0.8])  # b 1, d 0
    fused = {f.key: f for f in fuse(keyword, vector, dense_weight=0.3)}
    assert fused["a"].score == pytest.approx(0.7)
    assert fused["b"].score == pytest.approx(0.7 * 0.5 + 0.3)
    assert fused["d"].score == 0.0 and fused["d"].keyword_rank is None
    assert (fused["b"].keyword_rank, fused["b"].vector_rank) == (2, 1)


def test_a_strong_keyword_match_stays_ahead_of_what_only_meaning_finds():
    keyword = _ranked(["exact", "weak"], [20.0, 1.0])
    vector = _ranked(["near", "exact"], [0.95, 0.90])
    assert fuse(keyword, vector, dense_weight=0.3)[0].key == "exact"


def test_ties_go_to_the_keyword_list_so_the_order_is_stable():
    assert [f.key for f in fuse([("k", 1.0)], [("v", 1.0)], dense_weight=0.5)] == ["k", "v"]


def test_one_list_alone_keeps_its_order():
    ranked = _ranked(["x", "y", "z"], [3.0, 2.0, 1.0])
    assert [f.key for f in fuse([], ranked)] == ["x", "y", "z"]
    assert [f.key for f in fuse(ranked, [])] == ["x", "y", "z"]


def test_a_weight_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="dense_weight"):
        fuse([], [], dense_weight=1.5)


def test_a_model_without_a_weight_of_its_own_gets_the_default():
    assert dense_weight_for(None) == dense_weight_for("no-such-model") == DEFAULT_DENSE_WEIGHT


scored = st.dictionaries(st.integers(0, 40), st.floats(0, 50), max_size=30).map(
    lambda found: sorted(found.items(), key=lambda item: -item[1])
)


@given(scored, scored, st.floats(0, 1))
def test_every_hit_appears_once_best_score_first(keyword, vector, weight):
    fused = fuse(keyword, vector, dense_weight=weight)
    assert sorted(f.key for f in fused) == sorted({k for k, _ in keyword} | {k for k, _ in vector})
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(0 <= s <= 1 + 1e-9 for s in scores)


@st.composite
def first_in_both(draw: st.DrawFn) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """Two ranked lists headed by the same key, strictly ahead of the rest in each."""
    top = draw(st.integers(0, 40))

    def crowned(ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
        rest = [(key, score) for key, score in ranked if key != top]
        return [(top, max((score for _, score in rest), default=0.0) + 1.0), *rest]

    return crowned(draw(scored)), crowned(draw(scored))


@given(first_in_both(), st.floats(0, 1))
def test_first_in_both_lists_is_first_overall(lists, weight):
    keyword, vector = lists
    assert fuse(keyword, vector, dense_weight=weight)[0].key == keyword[0][0] == vector[0][0]
