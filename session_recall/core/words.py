"""Words as people type them, in any script: what keyword recall matches on.

The distribution has no ICU plugin, and its standard analyzer neither composes accents
(a decomposed "Café" is another word than a composed one) nor finds "机器学习" inside
"我喜欢机器学习" (it cuts Han into single characters, but Katakana and Hangul into
whole runs). So an event whose text is not plain ASCII gets a `words` field, made here
at ingest and analysed by `whitespace`, and a query is turned into terms the same way:

- the text is NFC-normalised, then lowercased;
- each `\\w+` word is cut into runs of Latin letters (and ASCII digits and `_`) and of
  any other script;
- a Latin run is one term: "thon" never matches "Python";
- any other run is one term per character, so a phrase of them finds the run inside
  a longer one ("太郎" in "私の名前は太郎です", "Алекс" in "Алексей").

ASCII text needs none of it: the standard analyzer's words are these, and such an
event has no `words` field. An event stored before the field existed has none either,
and is matched on `text` as before (see `recall.text_match`).
"""

import functools
import itertools
import re
import unicodedata

FIELD = "words"

_WORD = re.compile(r"\w+")


@functools.lru_cache(maxsize=4096)
def _is_latin(char: str) -> bool:
    if char.isascii():
        return char.isalnum() or char == "_"
    return unicodedata.name(char, "").startswith("LATIN")


def terms(text: str) -> list[str]:
    """`text`'s terms for the `words` field, in order (see the module's text)."""
    terms: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFC", text).lower()):
        if word.isascii():
            terms.append(word)
            continue
        for latin, run in itertools.groupby(word, _is_latin):
            if latin:
                terms.append("".join(run))
            else:
                terms.extend(run)
    return terms


def searchable_words(text: str) -> str | None:
    """The `words` field of an event with this text: its terms, space-separated; None
    for ASCII text, which the standard analyzer already cuts into the same words."""
    if text.isascii():
        return None
    return " ".join(terms(text))


def query_words(query: str) -> tuple[list[str], list[str]]:
    """The query's words for the `words` field, each once, in order: (plain ASCII
    words, each a term; phrases, each the terms of a word in another script, to be
    found in that order)."""
    plain: list[str] = []
    phrases: list[str] = []
    for word in dict.fromkeys(_WORD.findall(unicodedata.normalize("NFC", query).lower())):
        if word.isascii():
            plain.append(word)
        else:
            phrases.append(" ".join(terms(word)))
    return plain, phrases
