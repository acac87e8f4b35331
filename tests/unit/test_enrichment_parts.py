"""The enrichment's pure parts, on their own: the context rule, what a pass looks for,
its summary line and the conditional update it writes."""

import orjson
import pytest

from session_recall.indexer.enrichment import context_rule as rule
from session_recall.indexer.enrichment.passes import _within_bytes
from session_recall.indexer.enrichment.pending import among, pending_query, phases
from session_recall.indexer.enrichment.repair import update
from session_recall.indexer.enrichment.summary import EnrichmentSummary


def turn(i: int, text: str, **extra: object) -> dict:
    source = {"text": text, "timestamp": f"2026-01-01T00:00:0{i}Z", **extra}
    return {"_index": "events-1", "_id": f"t{i}", "_source": source}


TURNS = [turn(i, text) for i, text in enumerate(["one", "two", "three", "four", "five"])]


def test_a_context_holds_the_reach_of_turns_before_it_and_its_own_stems():
    terms = rule.turn_terms(TURNS)
    fields = rule.context_fields(TURNS, terms, 4)
    assert fields[rule.CONTEXT_FIELD] == " ".join(terms[4 - rule.CONTEXT_REACH : 5])
    assert fields[rule.CONTEXT_OF_FIELD] == ["t1", "t2", "t3"]
    assert fields[rule.CONTEXT_SINCE_FIELD] == TURNS[1]["_source"]["timestamp"]
    assert rule.held(TURNS, 4) == TURNS[1:4]


def test_the_first_turn_of_a_session_holds_only_itself():
    fields = rule.context_fields(TURNS, rule.turn_terms(TURNS), 0)
    assert fields[rule.CONTEXT_OF_FIELD] == []
    assert fields[rule.CONTEXT_SINCE_FIELD] is None
    assert rule.held(TURNS, 0) == []


def test_an_earlier_turn_adds_its_first_words_only():
    long = [turn(0, " ".join(f"w{i}" for i in range(500))), turn(1, "end")]
    context = rule.context_fields(long, rule.turn_terms(long), 1)[rule.CONTEXT_FIELD]
    assert len(context.split(" ")) == rule._NEIGHBOUR_TERMS + 1


def test_a_turn_stored_late_reaches_the_turns_whose_context_holds_it():
    late = {rule.key(TURNS[1])}
    assert rule.followers(TURNS, late) == [2, 3, 4][: rule.CONTEXT_REACH]
    assert rule.followers(TURNS, {rule.key(TURNS[4])}) == []


@pytest.mark.parametrize(
    ("enriched", "listed", "is_enriched"),
    [
        (None, [], False),
        (rule.CONTEXT_MARK, [rule.CONTEXT_MARK], True),
        (["context-1", rule.CONTEXT_MARK], ["context-1", rule.CONTEXT_MARK], True),
        (["context-1"], ["context-1"], False),
    ],
)
def test_an_event_is_enriched_when_it_carries_the_rules_mark(enriched, listed, is_enriched):
    hit = turn(0, "x", enriched=enriched)
    assert rule.listed(hit, rule.ENRICHED_FIELD) == listed
    assert rule.is_enriched(hit) is is_enriched


def test_an_events_position_is_its_sort_values_in_the_event_order():
    source = {"timestamp": "1970-01-01T00:00:01Z", "event_id": "e", "user_id": "u"}
    assert rule.position(source) == [1_000_000_000, "e", "u"]


def test_a_pass_looks_for_context_first_then_for_the_models_vectors():
    assert phases(None) == [pending_query(None)["bool"]["should"][0]]
    context, vectors = phases("m")
    assert context == {"bool": {"must_not": [{"term": {"enriched": rule.CONTEXT_MARK}}]}}
    assert vectors["bool"]["filter"][0] == {"term": {"enriched": rule.CONTEXT_MARK}}
    assert len(pending_query("m")["bool"]["should"]) == 2


def test_a_query_among_slices_keeps_both_and_all_events_without_slices():
    query, slices = {"match_all": {}}, {"terms": {"slot": [1]}}
    assert among(query, None) is query
    assert among(query, slices) == {"bool": {"filter": [query, slices]}}


def test_a_page_is_cut_to_its_bytes_but_keeps_one_event():
    hits = [turn(i, "x" * 10) for i in range(3)]
    assert _within_bytes(hits, 25) == hits[:2]
    assert _within_bytes(hits, 1) == hits[:1]


def test_an_update_is_routed_and_conditional_on_the_version_read():
    hit = {"_index": "i", "_id": "d", "_routing": "u", "_seq_no": 4, "_primary_term": 2}
    header, body = update(hit, {"stems": "a"})
    assert header == {
        "update": {"_index": "i", "_id": "d", "routing": "u", "if_seq_no": 4,
                   "if_primary_term": 2}
    }  # fmt: skip
    assert orjson.loads(body) == {"doc": {"stems": "a"}}
    assert update({"_index": "i", "_id": "d"}, {})[0] == {"update": {"_index": "i", "_id": "d"}}


def test_a_summary_says_what_was_done_and_what_to_do_next():
    summary = EnrichmentSummary(model="m", missing=3, enriched=2, failed=1, embedder_error="down")
    line = summary.line()
    assert line.startswith("3 event(s) awaited enrichment (stems, context, vectors of m)")
    assert "1 failed (run it again)" in line and "`session-recall embed`" in line
    assert summary.stalled and summary.done == 3
    assert not EnrichmentSummary(missing=2, enriched=2).stalled
    assert EnrichmentSummary(missing=2).stalled  # no progress
