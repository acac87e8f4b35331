"""A routing partition size above 1 spreads one user's events over that many shards of
each partition, and recall answers exactly as with one shard per user."""

import uuid
from collections.abc import Iterator

import pytest
from elasticsearch import Elasticsearch

from session_recall.recall import CrossSessionSearcher
from session_recall.templates import install, uninstall
from tests.support.events import event, write_events
from tests.support.pages import cursor_pages

pytestmark = pytest.mark.integration

KEY = b"routing-partition-cursor-key-32b"


@pytest.fixture
def spread(es: Elasticsearch) -> Iterator[str]:
    alias = f"t-spread_{uuid.uuid4().hex[:8]}"
    install(es, alias, shards=4, routing_partition_size=2)
    yield alias
    uninstall(es, alias)


def _history() -> list[dict]:
    return [
        event(f"e{n:03d}", user_id=f"u{n % 3}", session_id=f"s{n % 4}",
              text="we decided" if n % 2 else "we picked",
              timestamp=f"2026-06-{1 + n % 28:02d}T09:{n % 60:02d}:00Z")
        for n in range(150)
    ]  # fmt: skip


def _pages(es: Elasticsearch, alias: str, user: str) -> list[list[str]]:
    searcher = CrossSessionSearcher(es, alias=alias, user_id=user, cursor_key=KEY, page_size=7)
    return cursor_pages(searcher, "we decided")


def test_a_user_spreads_over_that_many_shards_and_recall_answers_the_same(
    es: Elasticsearch, alias: str, spread: str
):
    write_events(es, alias, _history())
    write_events(es, spread, _history())

    groups = es.search_shards(index=f"{spread}-2026.06", routing="u1").body["shards"]
    assert len(groups) == 2
    single = es.search_shards(index=f"{alias}-2026.06", routing="u1").body["shards"]
    assert len(single) == 1
    for user in ("u0", "u1", "u2"):
        assert _pages(es, spread, user) == _pages(es, alias, user)
        assert sum(map(len, _pages(es, spread, user))) == 25
