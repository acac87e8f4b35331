"""Erasure reaches every field derived from what it erases.

An event's words live on in the `context` of the turns after it (its stems, and the
`_id` in `context_of`). When any erasure returns, no word that occurred only in erased
events is findable in any mode of memory_search, nor left in any stored document's
`_source`; the turns after an erased one have their context rebuilt without it, and
nothing the erasure did not name is touched. A pass in flight, which read a session
before the erasure and writes after it, cannot bring the words back.
"""

import dataclasses
import json
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.index_names import memory_index, session_index
from session_recall.core.instant import Instant
from session_recall.embeddings import StaticEmbedder
from session_recall.indexer import Event, Scope, Submission, Writer, enrich, erase, tombstones
from session_recall.indexer.enrichment.memories import MemoryWriter
from session_recall.indexer.erasure import after_removal, forgetting
from session_recall.indexer.tombstones import tombstone_index
from session_recall.recall import Searchers
from tests.support.contexts import assert_contexts_complete
from tests.support.hooked import HookedClient

pytestmark = pytest.mark.integration

KEY = b"erasure-context-test-cursor-key!"
START = Instant.parse("2026-05-01T10:00:00Z").nanos
MODES = ("keyword", "semantic", "hybrid")


def sources(es: Elasticsearch, alias: str) -> str:
    """Every stored document's `_source`, kept memories' and session documents'
    included, as one text."""
    everything = f"{alias},{memory_index(alias)},{session_index(alias)}"
    es.indices.refresh(index=everything)
    hits = es.search(index=everything, size=10_000, query={"match_all": {}})["hits"]["hits"]
    return "\n".join(json.dumps(hit["_source"], ensure_ascii=False) for hit in hits)


def found_by(searchers: Searchers, user: str, word: str) -> list[str]:
    """The events memory_search finds *by* `word` for `user`, in every mode: a keyword
    match, or the word in a hit's text (the vector list ranks every event by meaning,
    so a hit of its own says nothing)."""
    searcher = searchers.memory(user_id=user)
    found = []
    for mode in MODES:
        for hit in searcher.search(word, mode=mode, limit=50, context=0).hits:
            if hit.score.keyword_rank is not None or word in hit.event.text.lower():
                found.append(f"{mode}:{hit.event.event_id}")
    return found


def test_an_erased_turn_leaves_no_word_in_the_turns_around_it(
    es: Elasticsearch, es_url: str, alias: str
):
    """The three turns of the issue: the middle one erased by `delete --event`."""
    texts = ["I booked the flight", "my passport number is zq998877", "anything else?"]
    events = [
        Event(event_id=f"t{n}", user_id="u", session_id="s", type="user_message", text=text,
              timestamp=Instant(START + n * 10**9))
        for n, text in enumerate(texts, start=1)
    ]  # fmt: skip
    assert all(w.result.stored for w in Writer(es, alias).write(map(Submission, events)))
    es.indices.refresh(index=alias)
    enrich(es, alias, StaticEmbedder())
    assert "zq998877" in sources(es, alias)  # in t2, and in the contexts of t3

    cli = ["--es-url", es_url, "--index", alias]
    removed = CliRunner().invoke(main, [*cli, "delete", "--user", "u", "--event", "t2"])
    assert removed.exit_code == 0, removed.output

    stored = sources(es, alias)
    assert "zq998877" not in stored and "passport" not in stored
    for mode in MODES:
        answer = CliRunner().invoke(
            main,
            [*cli, "memory-search", "--user", "u", "--mode", mode, "--format", "json",
             "passport zq998877"],
            env={"SESSION_RECALL_EMBEDDER": "static"},
        )  # fmt: skip
        assert answer.exit_code == 0, answer.output
        assert "zq998877" not in answer.output and "passport" not in answer.output
        hits = json.loads(answer.output)["hits"]
        assert all(hit["score"]["keywordRank"] is None for hit in hits), (mode, hits)
    # t3 keeps a context, without t2: it is still found by t1's words.
    searchers = Searchers(es, alias, KEY, embedder=StaticEmbedder())
    assert {"keyword:t1", "keyword:t3"} <= set(found_by(searchers, "u", "flight"))


# The model of the property test: turns with a word of their own, stored in a random
# order, enriched by passes (one of them with an erasure between its read and its
# write), and erased by scope.


@dataclass(frozen=True)
class Turn:
    user: str
    session: str
    n: int
    contact: str

    @property
    def event_id(self) -> str:
        return f"{self.session}-{self.n}"

    @property
    def word(self) -> str:
        # A word of its own: letters and digits the stemmer leaves alone.
        return f"qx{self.user[-3:]}{self.session}n{self.n}z"

    @property
    def nanos(self) -> int:
        return START + self.n * 10**9 + int(self.session[1:]) * 10**6

    def event(self) -> Event:
        return Event(
            event_id=self.event_id, user_id=self.user, session_id=self.session,
            timestamp=Instant(self.nanos), type="user_message", contact_id=self.contact,
            inbox_id="web", conversation_type="support",
            text=f"we spoke about {self.word} today",
        )  # fmt: skip


ERASURES = ("event", "session", "contact", "user-at-instant")


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[Turn], list[tuple]]:
    turns = [
        Turn("user", f"s{s}", n, draw(st.sampled_from(["c1", "c2"])))
        for s in range(draw(st.integers(1, 2)))
        for n in range(draw(st.integers(2, 7)))
    ]
    order = draw(st.permutations(turns))
    erasure = st.tuples(st.sampled_from(ERASURES), st.integers(0, 50))
    step = st.one_of(
        st.tuples(st.just("store"), st.integers(1, 4)),
        st.tuples(st.just("enrich")),
        st.tuples(st.just("erase"), erasure),
        # a memory kept from one or two stored turns, which holds their words
        st.tuples(st.just("remember"), st.integers(0, 50), st.integers(0, 50)),
        # the erasure runs after the pass found its page, or after it read the sessions
        st.tuples(
            st.just("enrich, erasing in flight"), erasure, st.sampled_from(["search", "msearch"])
        ),
    )
    return order, draw(st.lists(step, min_size=2, max_size=8))


def _scope(turns: list[Turn], stored: list[Turn], kind: str, pick: int) -> tuple[Scope, Instant]:
    """An erasure of `kind` aimed at one of the stored turns (any turn if none is)."""
    target = (stored or turns)[pick % len(stored or turns)]
    now = Instant.now()
    if kind == "event":
        return Scope.event(target.user, target.event_id), now
    if kind == "session":
        return Scope.session(target.user, target.session), now
    if kind == "contact":
        return Scope.contact(target.user, target.contact, "web"), now
    return Scope.user(target.user), Instant(target.nanos)  # the turns up to this one's


def _in_scope(turn: Turn, scope: Scope) -> bool:
    return {
        "user": True,
        "session": turn.session == scope.session_id,
        "contact": turn.contact == scope.contact_id,
        "event": turn.event_id == scope.event_id,
    }[scope.kind]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario=scenarios())
def test_no_erased_word_is_findable_whatever_the_order_of_stores_passes_and_erasures(
    es: Elasticsearch, module_alias: str, scenario: tuple[list[Turn], list[tuple]]
):
    alias = module_alias
    # Each example a user of its own: what an earlier one erased (its tombstones) is
    # no part of this one.
    user = f"user-{uuid.uuid4().hex[:12]}"
    order, steps = [dataclasses.replace(t, user=user) for t in scenario[0]], scenario[1]
    embedder = StaticEmbedder()
    writer = Writer(es, alias)
    waiting, stored, erased = list(order), [], set()
    memories = MemoryWriter(es, alias, user_id=user, embedder=embedder)
    kept_from: dict[str, set[Turn]] = {}  # memory id: its source turns

    def erasure(kind: str, pick: int) -> None:
        scope, at = _scope(order, stored, kind, pick)
        erase(es, alias, scope, at=at)
        # What is stored goes, whatever its instant; what comes later goes when it is
        # stamped up to the erasure's (refused).
        erased.update(
            t for t in order if _in_scope(t, scope) and (t in stored or t.nanos <= at.nanos)
        )

    for step in steps:
        if step[0] == "store":
            batch, waiting = waiting[: step[1]], waiting[step[1] :]
            for written in writer.write(Submission(t.event()) for t in batch):
                # A turn an erasure covered before it arrived is refused: gone all the same.
                assert written.result.stored or written.result.erased
            stored += batch
            es.indices.refresh(index=alias)
        elif step[0] == "enrich":
            enrich(es, alias, embedder)
        elif step[0] == "erase":
            erasure(*step[1])
        elif step[0] == "remember":
            present = [t for t in stored if t not in erased]
            if present:
                turns = {present[step[1] % len(present)], present[step[2] % len(present)]}
                statement = "remember " + " and ".join(sorted(t.word for t in turns))
                ids = [t.event_id for t in turns]
                kept_from[memories.save_memory(statement, "fact", ids).memory.memory_id] = turns
        else:  # the erasure runs between one of the pass's reads and its write
            hooked = HookedClient(es, after=step[2], hook=lambda s=step: erasure(*s[1]))
            enrich(hooked, alias, embedder)  # type: ignore[arg-type]
            if not hooked.fired:  # nothing was pending: the erasure still happens
                erasure(*step[1])
    enrich(es, alias, embedder)

    text = sources(es, alias)
    searchers = Searchers(es, alias, KEY, embedder=embedder)
    for turn in erased:
        assert turn.word not in text, (turn, steps)
        assert found_by(searchers, user, turn.word) == [], (turn, steps)
    kept = [t for t in stored if t not in erased]
    for turn in kept:  # nothing the erasures did not name is touched
        assert f"keyword:{turn.event_id}" in found_by(searchers, user, turn.word), (turn, steps)
    _assert_contexts_complete(es, alias, kept)
    es.indices.refresh(index=memory_index(alias))
    held = es.search(index=memory_index(alias), size=1000, query={"term": {"user_id": user}})
    left = {hit["_id"] for hit in held["hits"]["hits"]}
    # A memory goes with any of its sources, and stays while they all do.
    assert left == {m for m, turns in kept_from.items() if not turns & erased}, steps


def _assert_contexts_complete(es: Elasticsearch, alias: str, kept: list[Turn]) -> None:
    """The kept turns, and they alone, are stored, each with the context of the kept
    turns before it."""
    if not kept:
        return
    user = kept[0].user
    assert assert_contexts_complete(es, alias, user=user) == len(kept)
    hits = es.search(index=alias, size=1000, query={"term": {"user_id": user}})["hits"]["hits"]
    assert sorted(h["_source"]["event_id"] for h in hits) == sorted(t.event_id for t in kept)


def test_contexts_around_erasures_are_rebuilt_with_the_turns_that_remain(
    es: Elasticsearch, alias: str
):
    """Mixed contacts in one session: erasing c1 leaves c2's turns with contexts of
    c2's turns alone, and they are still found by the words around them."""
    rng = random.Random(7)
    turns = [Turn("user-mixed", "s1", n, rng.choice(["c1", "c2"])) for n in range(8)]
    turns[3] = Turn("user-mixed", "s1", 3, "c1")
    turns[4] = Turn("user-mixed", "s1", 4, "c2")
    written = Writer(es, alias).write(Submission(t.event()) for t in turns)
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=alias)
    enrich(es, alias, None)
    erase(es, alias, Scope.contact("user-mixed", "c1", "web"))
    kept = [t for t in turns if t.contact == "c2"]
    _assert_contexts_complete(es, alias, kept)
    text = sources(es, alias)
    assert all(t.word not in text for t in turns if t.contact == "c1")


# The adapters' erasures: pop_item and clear_session (OpenAI Agents SDK), delete_memory
# (ADK). Each leaves a turn after the erased one, whose context held it.


@pytest.fixture
def agents_store(es_url: str, alias: str) -> Iterator[Any]:
    from session_recall.integrations.store import EventStore

    store = EventStore(
        Settings(ELASTICSEARCH_URL=es_url, SESSION_RECALL_EMBEDDER="none"), index=alias
    )
    yield store
    store.close()


def _agents_session(store: Any, user: str) -> Any:
    from session_recall.integrations.openai_agents import SessionRecallSession

    return SessionRecallSession("chat", user_id=user, store=store)


def _remember(es: Elasticsearch, alias: str, word: str) -> None:
    """A kept memory that holds `word`, of the user of the event whose text has it."""
    es.indices.refresh(index=alias)
    [hit] = es.search(index=alias, query={"match": {"text": word}})["hits"]["hits"]
    user, source = hit["_source"]["user_id"], [hit["_source"]["event_id"]]
    MemoryWriter(es, alias, user_id=user).save_memory(f"remember {word}", "fact", source)
    assert word in sources(es, alias)


def _after(es: Elasticsearch, alias: str, user: str, session: str, text: str) -> None:
    """A turn of another surface (no item), stored after the session's items."""
    later = Event(event_id="later", user_id=user, session_id=session, type="note", text=text,
                  timestamp=Instant.now())  # fmt: skip
    assert all(w.result.stored for w in Writer(es, alias).write([Submission(later)]))
    es.indices.refresh(index=alias)


async def test_pop_item_takes_the_items_words_from_the_turns_after_it(
    es: Elasticsearch, alias: str, agents_store: Any
):
    session = _agents_session(agents_store, "agents-pop")
    await session.add_items([{"role": "user", "content": "my locker code is qzlocker42"}])
    _after(es, alias, "agents-pop", "chat", "noted, anything else")
    enrich(es, alias, None)
    assert "qzlocker42" in sources(es, alias)  # the note's context holds it
    _remember(es, alias, "qzlocker42")
    popped = await session.pop_item()
    assert popped is not None and "qzlocker42" in str(popped)
    assert "qzlocker42" not in sources(es, alias)
    assert "anyth" in sources(es, alias), "the note stays, with its own words"


async def test_clear_session_leaves_no_word_of_it(es: Elasticsearch, alias: str, agents_store: Any):
    session = _agents_session(agents_store, "agents-clear")
    await session.add_items(
        [{"role": "user", "content": f"step {n} of the plan qzplan{n}x"} for n in range(4)]
    )
    enrich(es, alias, None)
    _remember(es, alias, "qzplan2x")
    await session.clear_session()
    text = sources(es, alias)
    assert all(f"qzplan{n}x" not in text for n in range(4))


async def test_adk_delete_memory_takes_the_memorys_words_from_the_memories_after_it(
    es: Elasticsearch, es_url: str, alias: str, request: pytest.FixtureRequest
):
    from google.adk.events.event import Event as AdkEvent
    from google.adk.sessions.session import Session
    from google.genai import types

    from session_recall.integrations.adk import SessionRecallMemoryService

    settings = Settings(ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=alias,
                        SESSION_RECALL_EMBEDDER="none")  # fmt: skip
    service = SessionRecallMemoryService(settings=settings, mode="keyword")
    request.addfinalizer(service.close)
    texts = ["the gate is at the north entrance", "the alarm code is qzalarm77",
             "thanks, see you there"]  # fmt: skip
    events = [
        AdkEvent(id=f"m-{n}", invocation_id=f"i-{n}", author="user", timestamp=1_700_000_000 + n,
                 content=types.Content(parts=[types.Part(text=text)]))
        for n, text in enumerate(texts)
    ]  # fmt: skip
    session = Session(app_name="shop", user_id="ana", id="visit", last_update_time=1, events=events)
    await service.add_session_to_memory(session)
    enrich(es, alias, None)
    assert "qzalarm77" in sources(es, alias)
    _remember(es, alias, "qzalarm77")
    await service.delete_memory(app_name="shop", user_id="ana", memory_id="m-1")
    text = sources(es, alias)
    assert "qzalarm77" not in text and "alarm" not in text
    found = await service.search_memory(app_name="shop", user_id="ana", query="alarm code")
    assert found.memories == []


def test_prune_takes_the_pruned_turns_words_from_the_turns_after_them(
    es: Elasticsearch, es_url: str, alias: str
):
    """A session across a month's end: pruning the month leaves the next month's first
    turns with contexts of their own month's turns alone, also when run again."""
    edge = Instant.parse("2026-05-01T00:00:00Z").nanos
    turns = [
        Event(event_id=f"p{n}", user_id="pruner", session_id="s", type="user_message",
              text=f"part {n} word qzpart{n}x", timestamp=Instant(edge + (n - 3) * 10**9))
        for n in range(6)
    ]  # fmt: skip
    assert all(w.result.stored for w in Writer(es, alias).write(map(Submission, turns)))
    es.indices.refresh(index=alias)
    enrich(es, alias, None)
    assert "qzpart0x" in json.dumps(
        es.get(index=f"{alias}-2026.05", id=_id(es, alias, "p3"), routing="pruner")["_source"]
    )
    for n in (0, 4):  # a memory of a pruned turn, and one of a kept turn
        _remember(es, alias, f"qzpart{n}x")
    cli = ["--es-url", es_url, "--index", alias, "prune", "--before", "2026-05-01", "--yes"]
    for _ in range(2):
        pruned = CliRunner().invoke(main, cli)
        assert pruned.exit_code == 0, pruned.output
        text = sources(es, alias)
        assert all(f"qzpart{n}x" not in text for n in range(3)), text
        assert all(f"qzpart{n}x" in text for n in range(3, 6))
    contexts = {
        hit["_source"]["event_id"]: hit["_source"]["context"]
        for hit in es.search(index=alias, query={"match_all": {}})["hits"]["hits"]
    }
    assert contexts["p3"] == "part 3 word qzpart3x"
    assert contexts["p5"] == "part 3 word qzpart3x part 4 word qzpart4x part 5 word qzpart5x"


def _id(es: Elasticsearch, alias: str, event_id: str) -> str:
    es.indices.refresh(index=alias)
    hits = es.search(index=alias, query={"term": {"event_id": event_id}})["hits"]["hits"]
    return str(hits[0]["_id"])


def test_two_removals_in_one_session_leave_neither_ones_words(es: Elasticsearch, alias: str):
    """The rebuilding after one removal reads the turns before a context; another
    erasure removes one of them before it writes: it is rebuilt again, without it."""
    texts = ["qzalpha11 first", "bravo second", "xray third", "zulu fourth", "yankee fifth"]
    events = [
        Event(event_id=f"t{n}", user_id="u", session_id="s", type="user_message", text=text,
              timestamp=Instant(START + n * 10**9))
        for n, text in enumerate(texts)
    ]  # fmt: skip
    assert all(w.result.stored for w in Writer(es, alias).write(map(Submission, events)))
    es.indices.refresh(index=alias)
    enrich(es, alias, None)
    removed = es.search(index=alias, query={"term": {"event_id": "t2"}})["hits"]["hits"][0]
    es.delete(index=removed["_index"], id=removed["_id"], routing="u")  # as pop_item claims
    hooked = HookedClient(
        es, after="msearch", hook=lambda: erase(es, alias, Scope.event("u", "t0"))
    )
    after_removal(hooked, alias, "u", [removed["_id"]])  # type: ignore[arg-type]
    assert hooked.fired
    text = sources(es, alias)
    assert "qzalpha11" not in text and "xray" not in text, text
    assert assert_contexts_complete(es, alias, user="u") == 3


def test_an_erasure_leaves_the_record_of_another_under_way_to_it(es: Elasticsearch, alias: str):
    """An erasure finishes the records of removals that stopped half-way, never the
    record of one still under way (whose events are not all gone yet)."""
    events = [
        Event(event_id=f"r{n}", user_id=user, session_id="s", type="user_message",
              text=f"record test {n}", timestamp=Instant(START + n * 10**9))
        for n in range(3) for user in ("one", "two")
    ]  # fmt: skip
    assert all(w.result.stored for w in Writer(es, alias).write(map(Submission, events)))
    es.indices.refresh(index=alias)
    enrich(es, alias, None)
    ids = [
        h["_id"] for h in es.search(index=alias, query={"term": {"user_id": "one"}})["hits"]["hits"]
    ]
    # A removal of user one's events, recorded and not done yet (as one under way).
    tombstones.ensure_index(es, alias)
    with forgetting(es, alias, "one", ids):
        erase(es, alias, Scope.user("two"))  # finishes no record of a removal under way
        es.indices.refresh(index=tombstone_index(alias))
        records = es.count(index=tombstone_index(alias), query={"term": {"kind": "repair"}})
        assert records["count"] == 1, "the record of the removal under way stays"
        for hit in es.search(index=alias, query={"term": {"user_id": "one"}})["hits"]["hits"]:
            es.delete(index=hit["_index"], id=hit["_id"], routing="one")
    es.indices.refresh(index=tombstone_index(alias))
    assert es.count(index=tombstone_index(alias), query={"term": {"kind": "repair"}})["count"] == 0
