"""The published session ranking (`recall.session_ranking`), the recipe's step that runs
it, and the session documents it reads (`indexer.enrichment.session_documents`). Pure."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.user_filter import user_filter
from session_recall.indexer.enrichment.session_documents import (
    MAX_TEXT_CHARS,
    MAX_TURNS,
    Turn,
    document,
    document_id,
    extended,
    turn_of,
)
from session_recall.recall.errors import SearchRefused
from session_recall.recall.fusion import Fused, ranked
from session_recall.recall.memory_recipe import DEFAULT_RECIPE, Ranking, Recipe
from session_recall.recall.session_ranking import (
    best_turns,
    bm25_body,
    session_scores,
    with_session_ranking,
    zscored,
)
from session_recall.recall.transport import _msearch_answers


def _hit(key: str, score: float, rank: int) -> Fused[str]:
    return Fused(key, rank, None, score)


def _run(step):  # a step that searches nothing: its value
    with pytest.raises(StopIteration) as done:
        next(step)
    return done.value.value


def test_z_scores_have_mean_zero_and_unit_spread():
    z = zscored([("a", 1.0), ("b", 2.0), ("c", 3.0)])
    assert z["b"] == 0 and z["a"] == pytest.approx(-z["c"]) == pytest.approx(-(1.5**0.5))
    assert zscored([("a", 4.0), ("b", 4.0)]) == {"a": 0.0, "b": 0.0}
    assert zscored([]) == {}


def test_a_session_is_scored_by_its_whole_text_and_its_best_turn():
    bm25 = {"trip": 9.0, "dentist": 1.0}
    dense = best_turns([("t1", 0.9), ("t2", 0.4), ("d1", 0.5)], {"t1": "trip", "t2": "trip",
                                                                  "d1": "dentist"})  # fmt: skip
    assert dense == {"trip": 0.9, "dentist": 0.5}
    scores = session_scores(bm25, dense, alpha=0.5, among=["garden"])
    # The garden session: no BM25 (0), and the lowest dense score there is.
    assert scores["trip"] > scores["dentist"] > scores["garden"]
    only_text = session_scores(bm25, {"dentist": 1.0}, alpha=1.0)
    assert only_text["trip"] > only_text["dentist"]
    with pytest.raises(ValueError, match="alpha"):
        session_scores(bm25, dense, alpha=1.5)


def test_the_hits_of_the_best_session_rise_and_weight_zero_keeps_the_order():
    fused = [_hit("stray", 0.9, 1), _hit("t1", 0.8, 2), _hit("t2", 0.5, 3)]
    sessions = {"stray": "other", "t1": "trip", "t2": "trip"}
    scores = {"trip": 2.0, "other": -1.0}
    again = with_session_ranking(fused, sessions, scores, weight=0.4)
    assert [f.key for f in again] == ["t1", "t2", "stray"]
    assert again[0].score == pytest.approx(0.6 * 0.8 + 0.4)
    a_little = with_session_ranking(fused, sessions, scores, weight=0.1)
    assert [f.key for f in a_little] == ["t1", "stray", "t2"]
    assert with_session_ranking(fused, sessions, scores, weight=0) == fused
    assert with_session_ranking(fused, sessions, {}, weight=0.4) == fused
    first = with_session_ranking(fused, sessions, scores, weight=1)  # sessions first
    assert [f.key for f in first] == ["t1", "t2", "stray"]


@given(
    st.lists(st.tuples(st.floats(0, 1), st.sampled_from("abc")), min_size=1, max_size=20),
    st.dictionaries(st.sampled_from("abcd"), st.floats(-5, 5)),
    st.floats(0, 1),
)
def test_session_ranking_keeps_every_hit_once_within_zero_to_one(hits, scores, weight):
    fused = ranked([_hit(f"k{i}", score, i + 1) for i, (score, _) in enumerate(hits)])
    sessions = {f"k{i}": session for i, (_, session) in enumerate(hits)}
    again = with_session_ranking(fused, sessions, scores, weight=weight)
    assert sorted(f.key for f in again) == sorted(sessions)
    assert all(-1e-9 <= f.score <= 1 + 1e-9 for f in again)
    assert [f.score for f in again] == sorted((f.score for f in again), reverse=True)


def test_the_sessions_bm25_search_is_bound_to_its_user():
    body = bm25_body("ana", "trip lisbon")
    assert body["query"]["bool"]["filter"] == user_filter("ana")
    assert body["query"]["bool"]["must"] == [{"match": {"stems": "trip lisbon"}}]


def test_the_recipe_ranks_sessions_only_where_it_has_their_bm25():
    fused = [_hit("stray", 0.9, 1), _hit("t1", 0.8, 2)]
    sessions = {"stray": "other", "t1": "trip"}
    recipe = Recipe(session_ranking=0.5, session_alpha=1.0)
    base = Ranking([], "q", "q", 50, None, None, 0.5)
    assert _run(recipe.sessions(fused, sessions, base)) == fused  # no session documents
    ranking = Ranking([], "q", "q", 50, None, None, 0.5, session_bm25={"trip": 5.0})
    assert [f.key for f in _run(recipe.sessions(fused, sessions, ranking))] == ["t1", "stray"]
    assert DEFAULT_RECIPE.session_ranking > 0  # the default runs the step
    with pytest.raises(ValueError, match="session_ranking"):
        Recipe(session_ranking=2.0)


def _turn(n: int, text: str, stems: str | None = None) -> Turn:
    source = {"text": text, "timestamp": f"2026-05-01T10:00:0{n}Z"}
    if stems is not None:
        source["stems"] = stems
    return turn_of({"_id": f"id{n}", "_source": source})


def test_a_session_document_holds_its_turns_in_order_with_their_stems():
    doc = document(
        "ana", "s1", [_turn(0, "Booking hotels", "book hotel"), _turn(1, "Lisbon trips")]
    )
    assert doc["text"] == ["Booking hotels", "Lisbon trips"]
    assert doc["stems"] == ["book hotel", "lisbon trip"]  # the stored ones, else made here
    assert doc["event_ids"] == ["id0", "id1"] and doc["turns"] == 2
    assert (doc["since"], doc["until"]) == ("2026-05-01T10:00:00Z", "2026-05-01T10:00:01Z")
    assert document_id("ana", "s1") != document_id("bob", "s1")


def test_a_page_extends_a_document_with_the_turns_it_lacks():
    first = document("ana", "s1", [_turn(1, "Lisbon trips")])
    again = extended(first, "ana", "s1", [_turn(1, "Lisbon trips"), _turn(0, "an earlier turn")])
    assert again["event_ids"] == ["id1", "id0"] and again["turns"] == 2
    assert (again["since"], again["until"]) == ("2026-05-01T10:00:00Z", "2026-05-01T10:00:01Z")
    assert extended(None, "ana", "s1", [_turn(1, "Lisbon trips")]) == first


def test_a_long_session_document_keeps_its_last_turns():
    turns = [_turn(n, str(n) * (MAX_TEXT_CHARS // 2)) for n in range(4)]
    doc = document("ana", "s1", turns)
    assert doc["event_ids"] == ["id2", "id3"] and sum(map(len, doc["text"])) <= MAX_TEXT_CHARS
    many = [_turn(n % 10, f"turn {n}") for n in range(MAX_TURNS + 5)]
    assert document("ana", "s1", many)["turns"] == MAX_TURNS


def test_a_sessions_search_that_fails_finds_nothing_and_the_lists_stand():
    # A key made before session documents may not read their index: memory_search then
    # ranks without the session step, where any other refused search fails the call.
    refused = {"error": {"type": "security_exception"}, "status": 403}
    listed = {"hits": {"hits": [{"_id": "a"}]}, "_shards": {"failed": 0}}
    answers = _msearch_answers({"responses": [listed, refused]}, "events", None, [False, True])
    assert answers == [listed, {"hits": {"hits": []}}]
    with pytest.raises(SearchRefused):
        _msearch_answers({"responses": [refused, listed]}, "events", None, [False, True])
