"""Property: whatever memories several users keep, on whatever words, each user's
search (every kind filter, with or without history) and list return that user's
alone, and every page of a list is the user's, never repeating one."""

import uuid

import pytest
from elasticsearch import Elasticsearch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_recall.core.kept_memories import MEMORY_KINDS
from session_recall.embeddings import StaticEmbedder
from session_recall.indexer.enrichment.memories import MemoryWriter
from session_recall.recall import MemoriesSearcher
from tests.support.events import event, write_events

pytestmark = pytest.mark.integration

KEY = b"memories-isolation-cursor-key!!!"
WORDS = ("billing", "database", "badge", "locker", "french", "mysql", "oracle", "lunch")
EMBEDDER = StaticEmbedder()

memory = st.tuples(
    st.sampled_from(["u1", "u2", "u3"]),
    st.sampled_from(MEMORY_KINDS),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(kept=st.lists(memory, min_size=1, max_size=10), query=st.sampled_from(WORDS))
def test_a_users_memories_are_never_another_users(
    es: Elasticsearch, module_alias: str, kept: list[tuple[str, str, list[str]]], query: str
) -> None:
    run = uuid.uuid4().hex[:8]  # each example users of its own
    users = {name: f"{name}-{run}" for name in ("u1", "u2", "u3")}
    events = [
        event(f"e{i}", user_id=users[who], session_id="s", timestamp=f"2026-07-01T10:00:{i:02d}Z",
              text=" ".join(words))
        for i, (who, _kind, words) in enumerate(kept)
    ]  # fmt: skip
    write_events(es, module_alias, events)
    owner: dict[str, str] = {}
    for i, (who, kind, words) in enumerate(kept):
        writer = MemoryWriter(es, module_alias, user_id=users[who], embedder=EMBEDDER)
        saved = writer.save_memory(f"{' '.join(words)} {i}", kind, [f"e{i}"])
        owner[saved.memory.memory_id] = users[who]
    for user in users.values():
        searcher = MemoriesSearcher(es, user_id=user, alias=module_alias, embedder=EMBEDDER,
                                    cursor_key=KEY)  # fmt: skip
        mine = {m for m, who in owner.items() if who == user}
        for kinds in (None, ["decision", "fact"]):
            for history in (False, True):
                found = searcher.search(query, kinds=kinds, include_superseded=history)
                assert {m.memory_id for m in found.memories} <= mine
        listed, cursor = [], None
        while True:
            page = searcher.list(include_superseded=True, page_size=2, cursor=cursor)
            listed += [m.memory_id for m in page.memories]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert sorted(listed) == sorted(mine)
