"""Superseding: which current memories a new candidate replaces, on subjects alone."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.indexer.enrichment import subjects
from session_recall.indexer.enrichment.miner import Candidate
from session_recall.indexer.enrichment.superseding import Current, same_subject, superseded_by

DAY = datetime(2026, 3, 2, tzinfo=UTC)


def candidate(kind, subject, corrects=False):
    return Candidate(kind, "statement", subject, ("e9",), corrects)


def current(memory_id, kind, subject, days=0):
    return Current(memory_id, kind, subject, "older statement", DAY + timedelta(days=days))


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("billing", "billing", True),
        ("deadline", "submission deadline", True),
        ("submission deadline", "deadline", True),
        ("billing", "billing api", False),
        ("badge number", "frequent flyer number", False),
        ("space | tab", "space", True),
        ("space | tab", "tab | indent", True),
        ("space | tab", "seat", False),
        (None, "billing", False),
        (None, None, False),
        ("", "", False),
    ],
)
def test_same_subject_is_equal_keys_or_a_shorter_key_ending_the_longer(a, b, same):
    assert same_subject(a, b) is same


def test_a_newer_decision_supersedes_the_decisions_and_corrections_on_its_subject():
    older = [
        current("m1", "decision", "billing"),
        current("m2", "correction", "billing", days=1),
        current("m3", "preference", "billing", days=2),
        current("m4", "decision", "billing api", days=3),
    ]
    assert superseded_by(candidate("decision", "billing", corrects=True), older) == ["m1", "m2"]


def test_instructions_and_facts_supersede_each_other():
    older = [current("m1", "fact", "badge number"), current("m2", "instruction", "badge number")]
    assert superseded_by(candidate("instruction", "badge number"), older) == ["m1", "m2"]


def test_a_bare_correction_replaces_only_the_latest_memory_on_its_subject_of_any_kind():
    older = [
        current("m1", "decision", "ceremony"),
        current("m2", "instruction", "ceremony", days=1),
        current("m3", "instruction", "guest count", days=2),
    ]
    assert superseded_by(candidate("correction", "ceremony", corrects=True), older) == ["m2"]


def test_allergies_to_different_things_are_kept_side_by_side():
    older = [current("m1", "preference", "allergy peanut")]
    assert superseded_by(candidate("preference", "allergy kiwi"), older) == []


def test_a_candidate_without_a_subject_supersedes_nothing():
    older = [current("m1", "decision", "billing"), current("m2", "decision", None)]
    assert superseded_by(candidate("decision", None, corrects=True), older) == []
    assert superseded_by(candidate("correction", None, corrects=True), older) == []


keys = st.one_of(st.none(), st.sampled_from(["billing", "billing api", "deadline", "space | tab"]))


@given(keys, keys)
def test_same_subject_is_symmetric(a, b):
    assert same_subject(a, b) == same_subject(b, a)


@given(
    st.sampled_from(["decision", "correction", "instruction", "preference", "fact"]),
    keys,
    st.lists(
        st.tuples(
            st.sampled_from(["decision", "correction", "instruction", "preference", "fact"]),
            keys,
            st.integers(0, 30),
        ),
        max_size=8,
    ),
)
def test_only_current_memories_on_the_same_subject_are_superseded(kind, subject, memories):
    older = [current(f"m{i}", k, s, days) for i, (k, s, days) in enumerate(memories)]
    replaced = superseded_by(candidate(kind, subject), older)
    by_id = {m.memory_id: m for m in older}
    assert len(set(replaced)) == len(replaced)
    assert all(same_subject(subject, by_id[i].subject) for i in replaced)
    if kind == "correction":
        assert len(replaced) <= 1


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("the billing queues", "billing queue"),
        ("BoxCo's premium package", "boxco premium package"),
        ("my badge number", "badge number"),
        ("it", None),
        ("", None),
    ],
)
def test_a_key_is_lower_case_singular_words_without_articles_or_possessives(phrase, expected):
    assert subjects.key(phrase) == expected


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("Billing data never leaves Postgres", "billing data"),
        ("The rent is due on the 1st now", "rent"),
        ("The retention period for raw events is 90 days", "retention period"),
        ("I have a knee injury", None),
        ("Cancel the old internet contract", None),
    ],
)
def test_a_clause_subject_is_the_noun_phrase_before_its_first_verb(clause, expected):
    assert subjects.clause_subject(clause) == expected
