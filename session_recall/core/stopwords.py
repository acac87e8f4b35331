"""English function words: what a natural-language query says besides its topic.

A question such as "what did we decide about the database?" is mostly function words.
Under BM25 each one still matches most events (the standard analyzer keeps them, and
this distribution has no stop filter to configure), so an OR of all the words ranks
events by how many "what", "did" and "we" they hold; memory_search's keyword query
leaves them out (`content_terms`). A static embedder that averages token vectors is
pulled the same way towards every other text full of them, so it leaves them out too.
"""

import re
import unicodedata

_FUNCTION_WORDS = """a about above after again against all am an and any are aren't as at be because
    been before being below between both but by can can't cannot could couldn't did
    didn't do does doesn't doing don't down during each few for from further had hadn't
    has hasn't have haven't having he he'd he'll he's her here here's hers herself him
    himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    let's me more most mustn't my myself no nor not of off on once only or other ought
    our ours ourselves out over own same shan't she she'd she'll she's should shouldn't
    so some such than that that's the their theirs them themselves then there there's
    these they they'd they'll they're they've this those through to too under until up
    very was wasn't we we'd we'll we're we've were weren't what what's when when's where
    where's which while who who's whom why why's will with won't would wouldn't you
    you'd you'll you're you've your yours yourself yourselves"""
STOPWORDS = frozenset(_FUNCTION_WORDS.split())

_WORD = re.compile(r"[\w']+")


def content_words(text: str) -> list[str]:
    """The words of `text` that are not function words, as written (apostrophes kept),
    accents composed (NFC): a decomposed accent is no word character, and would cut
    its word in two."""
    words = _WORD.findall(unicodedata.normalize("NFC", text))
    return [w for w in words if w.lower().replace("’", "'") not in STOPWORDS]


def content_terms(text: str) -> str:
    """`text` without its function words, or `text` itself when nothing else is left."""
    kept = content_words(text)
    return " ".join(kept) if kept else text
