"""English word stems: what lets "researching" find "research", at no cost to the engine.

The integ-test-zip has no language analyzers (they live in the analysis-common module),
so stemming cannot be asked of Elasticsearch everywhere. It is done here instead, with
the Snowball English stemmer: the enrichment pass stores each event's stems (and its
context's) as space-separated terms in fields analysed by `whitespace`, and
memory_search stems the query with this same function. One function on both sides, so
a word and its query always meet, on any distribution.

Function words are left out on both sides (`stopwords`), and so is case. A stem is
never a query operator: the fields are searched with `match`, which takes a value.
"""

import functools

import Stemmer

from session_recall.core.stopwords import content_words


@functools.cache
def _stemmer() -> "Stemmer.Stemmer":
    return Stemmer.Stemmer("english")


def stems(text: str) -> str:
    """The stems of `text`'s content words, lowercased, in order, space-separated
    (an empty string when it has none)."""
    words = [w.lower().replace("’", "'") for w in content_words(text)]
    return " ".join(_stemmer().stemWords(words))
