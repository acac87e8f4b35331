"""A search that runs out of time on the node is an error to retry, never a short page.

The query is heavy on purpose: twenty phrases of twenty words over texts of two words
("a", "b"), so that the node checks positions in every event of the user and finds
few matches. The node reads its clock every 200 ms (its cached time), so a `timeout`
is only seen by a search that runs longer than that: this one runs for about a second
here, twice at once (the page, and the look for the latest match). With partial
results refused, which recall always asks, the node fails such a search with 429 and
a `search_timeout_exception`, not with `timed_out` in an answer."""

import random

import pytest
from elasticsearch import Elasticsearch

from session_recall.core.errors import ElasticsearchUnavailable
from session_recall.core.instant import Instant
from session_recall.recall import CrossSessionSearcher
from tests.support.events import event, write_events

pytestmark = pytest.mark.integration

KEY = b"search-timeout-test-cursor-key-!"
EVENTS, WORDS, PHRASES = 6_000, 250, 20


def _words(rng: random.Random, count: int) -> str:
    """`count` words, each "a" or "b", at random."""
    bits = format(rng.getrandbits(count), f"0{count}b")
    return " ".join(bits).replace("0", "a").replace("1", "b")


def _texts_and_phrases() -> tuple[list[str], list[str]]:
    rng = random.Random(20261205)
    return [_words(rng, WORDS) for _ in range(EVENTS)], [_words(rng, 20) for _ in range(PHRASES)]


def test_a_search_past_its_timeout_on_the_node_is_an_error_not_a_short_page(
    es: Elasticsearch, alias: str
):
    texts, phrases = _texts_and_phrases()
    start = Instant.parse("2026-07-01T00:00:00Z").nanos
    write_events(
        es,
        alias,
        [
            event(f"e{i:04d}", user_id="u", session_id=f"s{i % 20}",
                  timestamp=Instant(start + i * 10**9), text=text)
            for i, text in enumerate(texts)
        ],
    )  # fmt: skip
    query = ", ".join(phrases)
    # Some events hold a phrase: without a timeout, the first page would be theirs.
    assert sum(any(f" {p} " in f" {t} " for p in phrases) for t in texts) >= 10
    tight = CrossSessionSearcher(es, alias=alias, user_id="u", cursor_key=KEY, search_timeout=0.001)
    with pytest.raises(ElasticsearchUnavailable, match=r"ran past its 0\.001 s limit") as raised:
        tight.search(query)
    assert "narrow the search" in (raised.value.hint or "")
