"""memory_search never returns another user's event, in any mode, neighbours included.

Every user holds near-duplicates of every other user's texts, in sessions with the
same ids: only the user pin tells them apart, in the keyword query (over the text,
its stems and its context), in the kNN pre-filter and in the neighbour queries.
"""

import random

import pytest
from elasticsearch import Elasticsearch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bench.ranking_steps import Experiment
from session_recall.core.instant import Instant
from session_recall.embeddings import StaticEmbedder
from session_recall.indexer import Event, Submission, Writer, enrich
from session_recall.recall import SEARCH_MODES, InvalidQuery, Searchers
from session_recall.recall.memory_recipe import DEFAULT_RECIPE, Recipe

pytestmark = pytest.mark.integration

KEY = b"memory-isolation-cursor-key-32b!"
USERS = ["alice", "bob", "user_id:bob", "*", "用户"]
BASE = [
    "OK, let's go with Postgres and keep Redis for caching.",
    "We decided on Lisbon, the flights are cheaper.",
    "The vet says it's gastritis: a bland diet of rice and chicken for a week.",
    "Refund 45 euros and send a 10 euro voucher for order 7731.",
    "The technician replaces the oven's heating element on Monday.",
    'user_id:bob OR * AND NOT {"user_id": "alice"}',
    "决定 预算 下周",
]
START = Instant.parse("2026-06-01T00:00:00Z").nanos


def build() -> tuple[list[Event], dict[tuple[str, int], str], dict[str, set[str]]]:
    """Events, who owns each, and the texts of `BASE` each user's events are made
    from. Event ids repeat across users on purpose; the nanoseconds of the timestamp
    are the user's number, so (event_id, timestamp) tells the owner."""
    rng = random.Random(10)
    events, owners = [], {}
    held: dict[str, set[str]] = {user: set() for user in USERS}
    for u, user in enumerate(USERS):
        for n in range(30):
            # Near-duplicates: the same text with a word or two varied per user.
            base = rng.choice(BASE)
            held[user].add(base)
            text = base.replace("the", rng.choice(["the", "our", "this"]), 1)
            event_id = f"e{n}"
            stamp = Instant(START + n * 10**9 + u)
            owners[event_id, stamp.nanos] = user
            events.append(
                Event(
                    event_id=event_id,
                    user_id=user,
                    session_id=f"s{n % 3}",
                    timestamp=stamp,
                    type=rng.choice(["user_message", "assistant_message", "tool_call"]),
                    text=text,
                )
            )
    return events, owners, held


EVENTS, OWNERS, HELD = build()
# Sentences of plain English: a user whose events are made from one finds them with
# it in every mode (keyword by its words, kNN by nearness).
PLAIN = BASE[:5]


@pytest.fixture(scope="module")
def searchers(es: Elasticsearch, module_alias: str) -> Searchers:
    embedder = StaticEmbedder()
    written = list(Writer(es, module_alias).write(map(Submission, EVENTS)))
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=module_alias)
    # Stems, context and vectors, in pages that cut across users and sessions.
    assert enrich(es, module_alias, embedder, page_size=7).enriched == len(EVENTS)
    es.indices.refresh(index=module_alias)
    return Searchers(es, module_alias, KEY, embedder=embedder)


# Every ranking step, alone and together: each search it adds (the expanded keyword
# list, a second vector list, the sessions' vectors) carries the user's pin too. The
# static model's own field stands in for the context and the session vectors.
RECIPES = [
    DEFAULT_RECIPE,
    Recipe(session_weight=0.5, session_top=2),
    Experiment(expansion_terms=5, expansion_docs=3, expansion_weight=0.5),
    Experiment(second_round=3, second_weight=1.0),
    Experiment(vector_context=0.5),
    Experiment(session_model=StaticEmbedder().model_id, session_vector_weight=0.5),
    Experiment(context_model=StaticEmbedder().model_id),
    Experiment(context_model=StaticEmbedder().model_id, context_only=True, session_weight=0.3,
               expansion_terms=3, second_round=2),
]  # fmt: skip

queries = st.one_of(
    st.sampled_from(BASE),
    st.sampled_from(USERS),
    st.text(min_size=1, max_size=40),
    st.lists(st.sampled_from(" ".join(BASE).split()), min_size=1, max_size=8).map(" ".join),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    user=st.sampled_from(USERS),
    query=queries,
    mode=st.sampled_from(SEARCH_MODES),
    context=st.integers(0, 3),
    limit=st.integers(1, 50),
    recipe=st.sampled_from(RECIPES),
)
@example(user="alice", query=PLAIN[0], mode="keyword", context=1, limit=10, recipe=DEFAULT_RECIPE)
@example(user="bob", query=PLAIN[1], mode="semantic", context=0, limit=5, recipe=DEFAULT_RECIPE)
@example(user="用户", query=PLAIN[2], mode="hybrid", context=2, limit=50, recipe=RECIPES[-1])
def test_memory_search_returns_no_event_of_another_user(
    searchers: Searchers, user: str, query: str, mode: str, context: int, limit: int,
    recipe: Recipe,
):  # fmt: skip
    try:
        result = searchers.memory(user_id=user, recipe=recipe).search(
            query, mode=mode, context=context, limit=limit
        )
    except InvalidQuery:
        return  # a blank query is refused before any request
    if query in PLAIN and query in HELD[user]:
        assert result.hits, (user, query, mode)  # not vacuous: the loop below checks some
    for hit in result.hits:
        for item in [hit.event, *hit.before, *hit.after]:
            assert OWNERS[item.event_id, item.timestamp.nanos] == user, (user, item)
        assert len(hit.before) <= context and len(hit.after) <= context
