"""The user's words matched in an event's text, in any script (pure builders).

An event whose text is not plain ASCII has a `words` field (`core.words`): its text
NFC-normalised, lowercased, Latin words whole and other scripts a term per character.
It is matched there, so that a decomposed accent meets a composed one and "机器学习" is
found inside "我喜欢机器学习". Any other event (ASCII text, or stored before the field
existed) is matched on `text` as it always was: each clause on `text` leaves out the
events that have `words`, so no event is matched by the standard analyzer's cut of a
script it does not know (Han one character at a time, any of them).
"""

from typing import Any

from session_recall.core.words import FIELD, query_words, terms

Body = dict[str, Any]  # as `query.Body`, which builds on these clauses


def _without_words(clause: Body) -> Body:
    return {"bool": {"must": [clause], "must_not": [{"exists": {"field": FIELD}}]}}


def phrase_clause(term: str) -> Body:
    """`term` (a word, or words in that order) in an event's text."""
    clauses = [_without_words({"match_phrase": {"text": {"query": term}}})]
    found = terms(term)
    if found:
        clauses.append({"match_phrase": {FIELD: {"query": " ".join(found)}}})
    return {"bool": {"should": clauses, "minimum_should_match": 1}}


def any_word_clauses(query: str, *, boost: float) -> list[Body]:
    """Clauses that score an event by the words of `query` it holds, any of them (BM25:
    the more and the rarer, the higher); a word in another script than Latin counts
    where its characters stand together, as a substring."""
    clauses = [_without_words({"match": {"text": {"query": query, "boost": boost}}})]
    plain, phrases = query_words(query)
    if plain:
        clauses.append({"match": {FIELD: {"query": " ".join(plain), "boost": boost}}})
    clauses += [{"match_phrase": {FIELD: {"query": phrase, "boost": boost}}} for phrase in phrases]
    return clauses
