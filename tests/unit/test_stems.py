"""English stems: word forms meet, function words and case never count, and a text's
stems are its parts' stems in order (the enrichment builds a context that way, and the
query side stems a whole question at once)."""

from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.stems import stems
from session_recall.core.stopwords import STOPWORDS

_words = st.text(alphabet=st.characters(categories=("L", "N", "Zs", "P")), max_size=80)


def test_word_forms_meet():
    assert stems("researching") == stems("research") == stems("Researched")
    assert stems("adoption agencies") == stems("adopting an agency")
    assert stems("What did we decide about the database?") == stems("decided DATABASES")


def test_a_text_of_function_words_alone_has_no_stems():
    assert stems("what did we do about it?") == ""
    assert stems("") == "" and stems("!!! …") == ""


@given(_words)
def test_stems_are_lowercase_terms_without_function_words(text: str):
    terms = stems(text).split()
    assert all(term == term.lower() and " " not in term for term in terms)
    assert not set(terms) & {"the", "what", "did", "we", "about"}
    assert not [t for t in terms if t in STOPWORDS and t in ("a", "an", "of")]


@given(_words, _words)
def test_a_texts_stems_are_its_parts_stems_in_order(first: str, second: str):
    joined = " ".join(part for part in (stems(first), stems(second)) if part)
    assert stems(f"{first} {second}") == joined
