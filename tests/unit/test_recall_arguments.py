"""Validation of what a model passes, before any request."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.instant import Instant
from session_recall.recall.arguments import (
    MAX_TERM_LENGTH,
    MAX_TERMS,
    checked_page,
    parse_match,
    parse_phrase,
    parse_since,
    parse_terms,
)
from session_recall.recall.errors import (
    EmptyQuery,
    InvalidMatchMode,
    InvalidPage,
    InvalidSince,
    RecallError,
    TermTooLong,
    TooManyTerms,
)


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("we decided", ("we decided",)),
        ("we decided, let's go with", ("we decided", "let's go with")),
        ("  Padded ,\tTabs\t,", ("Padded", "Tabs")),
        ("a,,b, ,c", ("a", "b", "c")),
        ("user_id:bob, *, OR", ("user_id:bob", "*", "OR")),
        ('{"user_id": "bob"}', ('{"user_id": "bob"}',)),
    ],
)
def test_terms_are_split_on_commas_trimmed_and_empties_dropped(query, terms):
    assert parse_terms(query) == terms


@pytest.mark.parametrize("query", [",", ", ", ",,, ,\t,", "...", "?!, *", " - "])
def test_a_query_without_a_word_is_an_error_not_no_filter(query):
    with pytest.raises(EmptyQuery) as raised:
        parse_terms(query)
    assert "has no word to search for" in str(raised.value)


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_is_named_empty(query):
    with pytest.raises(EmptyQuery, match="The query is empty"):
        parse_terms(query)


@pytest.mark.parametrize("query", ["x", "中", "🙂", "c++", "é", "3"])
def test_one_letter_digit_or_emoji_is_a_word(query):
    assert parse_terms(query) == (query,)


def test_twenty_terms_pass_and_twenty_one_are_rejected():
    assert len(parse_terms(",".join(f"t{i}" for i in range(MAX_TERMS)))) == MAX_TERMS
    with pytest.raises(TooManyTerms, match="21 terms; at most 20"):
        parse_terms(",".join(f"t{i}" for i in range(21)))


def test_a_term_past_the_length_bound_is_rejected():
    assert parse_terms("x" * MAX_TERM_LENGTH) == ("x" * MAX_TERM_LENGTH,)
    with pytest.raises(TermTooLong, match=str(MAX_TERM_LENGTH)):
        parse_terms("ok, " + "x" * (MAX_TERM_LENGTH + 1))


@given(st.text(alphabet=st.sampled_from(list("ab ,\t\n中*\\\"'")), max_size=80))
def test_parsed_terms_are_the_trimmed_non_empty_pieces_between_commas(query):
    pieces = tuple(piece.strip() for piece in query.split(",") if piece.strip())
    if not any(char.isalnum() for piece in pieces for char in piece):
        with pytest.raises(EmptyQuery):
            parse_terms(query)
    elif len(pieces) > MAX_TERMS:
        with pytest.raises(TooManyTerms):
            parse_terms(query)
    else:
        assert parse_terms(query) == pieces


def test_a_phrase_is_taken_whole_and_trimmed():
    assert parse_phrase("  yes, please ") == "yes, please"
    with pytest.raises(EmptyQuery):
        parse_phrase("  ")
    with pytest.raises(TermTooLong):
        parse_phrase("y" * (MAX_TERM_LENGTH + 1))


@pytest.mark.parametrize(("given_", "mode"), [("any", "any"), ("all", "all"), (" ALL ", "all")])
def test_match_modes(given_, mode):
    assert parse_match(given_) == mode


@pytest.mark.parametrize("bad", ["both", "", "or", None])
def test_an_unknown_match_mode_names_the_two_modes(bad):
    with pytest.raises(InvalidMatchMode, match=r"'any'.*'all'"):
        parse_match(bad)


@pytest.mark.parametrize("bad", ["2026-07-01", "2026-07-01T00:00:00", "yesterday", ""])
def test_a_malformed_since_names_the_expected_format(bad):
    with pytest.raises(InvalidSince) as raised:
        parse_since(bad)
    assert "2026-07-01T00:00:00Z" in str(raised.value)
    assert isinstance(raised.value, RecallError)


def test_since_accepts_offsets_and_instants():
    assert parse_since("2026-07-01T02:00:00+02:00") == Instant.parse("2026-07-01T00:00:00Z")
    assert parse_since(None) is None
    at = Instant.parse("2026-07-01T00:00:00Z")
    assert parse_since(at) is at


@pytest.mark.parametrize("page", [0, 7])
def test_pages_count_from_zero(page):
    assert checked_page(page) == page


@pytest.mark.parametrize("page", [-1, -3, True])
def test_negative_pages_are_refused(page):
    with pytest.raises(InvalidPage, match="Pages count from 0"):
        checked_page(page)
