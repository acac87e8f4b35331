"""`core.words`: the terms an event's text and a query are cut into, in any script."""

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.words import query_words, searchable_words, terms


def test_latin_words_are_whole_and_other_scripts_a_term_per_character() -> None:
    assert (
        searchable_words("私はPythonでADKを使っています")
        == "私 は python で adk を 使 っ て い ま す"
    )
    assert searchable_words("Меня зовут Алексей") == "м е н я з о в у т а л е к с е й"
    assert searchable_words("Meet at the Café") == "meet at the café"
    assert searchable_words("plain ascii") is None


def test_a_query_is_plain_words_and_phrases_each_once() -> None:
    assert query_words("Café café 太郎 ABC abc?") == (["abc"], ["café", "太 郎"])
    assert query_words("...") == ([], [])


@given(st.text(max_size=40))
def test_composed_and_decomposed_text_give_the_same_terms(text: str) -> None:
    nfd, nfc = (unicodedata.normalize(form, text) for form in ("NFD", "NFC"))
    assert terms(nfd) == terms(nfc)
    assert query_words(nfd) == query_words(nfc)


@given(st.text(max_size=40))
def test_terms_are_lowercase_and_hold_no_whitespace(text: str) -> None:
    for term in terms(text):
        assert term and not any(c.isspace() for c in term)
        assert term == term.lower()
