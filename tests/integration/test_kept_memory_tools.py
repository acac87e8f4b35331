"""The kept-memory tools end to end (recall_memories, save_memory, retire_memory), as a
model calls them: the user bound when the tool is built, no argument that widens it,
another user's memories never listed, searched or returned, and output bounded."""

import json

import pytest
from elasticsearch import Elasticsearch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_recall.config import Settings
from session_recall.indexer.enrichment.memories import MemoryWriter
from session_recall.recall import Searchers
from session_recall.tools import (
    BoundTool,
    kept_memory_tools,
    recall_memories_tool,
    retire_memory_tool,
    save_memory_tool,
)
from session_recall.tools.arguments import MAX_MEMORIES, MAX_TURNS
from session_recall.tools.bounds import OutputBounds
from session_recall.tools.searchers import searchers_for
from tests.support.samples import THOUGHT, ingested_samples

pytestmark = pytest.mark.integration

# alice's turns in the samples: "Remember this: billing data never leaves Postgres." and
# "Actually, correction: the offsite moves to October."; bob's: "We decided to move
# the launch to Friday; keep it secret."
ALICE_BILLING, ALICE_OFFSITE, ALICE_LISBON = "sample-008", "sample-009", "sample-003"
BOB_LAUNCH = "sample-013"
BOB_SECRET = "launch moves to Friday"


@pytest.fixture(scope="module")
def sample_settings(es_url: str, module_alias: str, tmp_path_factory) -> Settings:
    return ingested_samples(es_url, module_alias, tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="module")
def searchers(es: Elasticsearch, sample_settings: Settings) -> Searchers:
    return searchers_for(es, sample_settings)


def _tools(es: Elasticsearch, searchers: Searchers, user: str, **scope) -> dict[str, BoundTool]:
    writer = MemoryWriter(es, searchers.alias, user_id=user, **scope)
    tools = kept_memory_tools(
        searchers.memories(user_id=user), writer, turns=searchers.memory(user_id=user), **scope
    )
    return {tool.name: tool for tool in tools}


def _call(tool: BoundTool, **arguments) -> dict:
    result = tool.call({"innerThought": THOUGHT, **arguments})
    assert not result.is_error, result.text
    assert THOUGHT not in result.text
    return json.loads(result.text)


@pytest.fixture(scope="module")
def saved(es: Elasticsearch, searchers: Searchers) -> dict[str, str]:
    """Memories of alice and of bob, saved through their own tools."""
    alice, bob = _tools(es, searchers, "alice"), _tools(es, searchers, "bob")
    billing = _call(
        alice["save_memory"],
        statement="Billing data never leaves Postgres.",
        kind="instruction",
        sources=[ALICE_BILLING],
        subject="billing database",
    )
    launch = _call(
        bob["save_memory"],
        statement="The launch moves to Friday, a secret.",
        kind="decision",
        sources=[BOB_LAUNCH],
    )
    return {"alice": billing["saved"]["memoryId"], "bob": launch["saved"]["memoryId"]}


def test_a_saved_memory_is_recalled_with_its_sources(es, searchers, saved):
    alice = _tools(es, searchers, "alice")
    found = _call(alice["recall_memories"], query="where does billing data live?")
    [memory] = [m for m in found["memories"] if m["memoryId"] == saved["alice"]]
    assert memory["statement"] == "Billing data never leaves Postgres."
    assert memory["kind"] == "instruction" and memory["sources"] == [ALICE_BILLING]
    assert memory["supersededBy"] is None and memory["validFrom"].startswith("2026-06-20")
    assert "turns" not in found  # none asked for


def test_turns_come_after_the_memories_only_when_asked(es, searchers, saved):
    alice = _tools(es, searchers, "alice")
    found = _call(alice["recall_memories"], query="billing Postgres", turns=2)
    assert list(found) == ["memories", "turns"]
    assert found["memories"][0]["memoryId"] == saved["alice"]
    assert 1 <= len(found["turns"]) <= 2
    assert all(turn["sessionId"].startswith("s-") for turn in found["turns"])  # alice's
    assert any("Postgres" in turn["text"] for turn in found["turns"])


def test_a_correction_supersedes_and_history_is_listed_only_when_asked(es, searchers, module_alias):
    alice = _tools(es, searchers, "alice")
    first = _call(
        alice["save_memory"],
        statement="The offsite is in September.",
        kind="decision",
        sources=["sample-001"],
        subject="offsite month",
    )["saved"]["memoryId"]
    second = _call(
        alice["save_memory"],
        statement="The offsite moves to October.",
        kind="correction",
        sources=[ALICE_OFFSITE],
        supersedes=first,
        subject="offsite month",
    )
    assert second["created"] is True and second["superseded"] == [first]
    current = _call(alice["recall_memories"], query="when is the offsite?")["memories"]
    ids = [m["memoryId"] for m in current]
    assert second["saved"]["memoryId"] in ids and first not in ids
    history = _call(alice["recall_memories"], query="when is the offsite?", includeSuperseded=True)
    old = next(m for m in history["memories"] if m["memoryId"] == first)
    assert old["supersededBy"] == second["saved"]["memoryId"] and "validTo" in old
    kinds = _call(alice["recall_memories"], query="offsite", kinds=["correction"])["memories"]
    assert {m["kind"] for m in kinds} == {"correction"}


def test_another_users_memories_are_never_returned(es, searchers, saved):
    alice, bob = _tools(es, searchers, "alice"), _tools(es, searchers, "bob")
    for query in (BOB_SECRET, "launch Friday secret", "billing Postgres"):
        text = (
            alice["recall_memories"]
            .call({"innerThought": THOUGHT, "query": query, "includeSuperseded": True, "turns": 10})
            .text
        )
        assert saved["bob"] not in text and "Friday" not in text, text
        text = (
            bob["recall_memories"]
            .call({"innerThought": THOUGHT, "query": query, "includeSuperseded": True, "turns": 10})
            .text
        )
        assert saved["alice"] not in text and "Postgres" not in text, text


@pytest.mark.parametrize("smuggled", ["user", "userId", "user_id", "contactId", "index"])
def test_no_argument_can_name_another_user(es, searchers, saved, smuggled):
    alice = _tools(es, searchers, "alice")
    for name, arguments in (
        ("recall_memories", {"query": "launch"}),
        ("save_memory", {"statement": "x", "kind": "fact", "sources": [BOB_LAUNCH]}),
        ("retire_memory", {"memoryId": saved["bob"], "reason": "x"}),
    ):
        result = alice[name].call({"innerThought": THOUGHT, **arguments, smuggled: "bob"})
        assert result.is_error and f"unknown argument '{smuggled}'" in result.text


def test_another_users_event_is_no_source_and_their_memory_cannot_be_retired(es, searchers, saved):
    alice = _tools(es, searchers, "alice")
    refused = alice["save_memory"].call(
        {"innerThought": THOUGHT, "statement": "Launch Friday.", "kind": "fact",
         "sources": [BOB_LAUNCH]}
    )  # fmt: skip
    assert refused.is_error and BOB_LAUNCH in refused.text, refused.text
    assert "Traceback" not in refused.text and len(refused.text) < 400
    retired = alice["retire_memory"].call(
        {"innerThought": THOUGHT, "memoryId": saved["bob"], "reason": "not mine"}
    )
    assert retired.is_error and "No memory of this user" in retired.text, retired.text
    # bob's memory is untouched: still current for bob.
    bob = _tools(es, searchers, "bob")
    still = _call(bob["recall_memories"], query="launch Friday")["memories"]
    assert [m["supersededBy"] for m in still if m["memoryId"] == saved["bob"]] == [None]
    assert all("retired" not in m for m in still)


def test_a_retired_memory_leaves_recall_and_stays_as_history(es, searchers):
    alice = _tools(es, searchers, "alice")
    saved = _call(
        alice["save_memory"],
        statement="The offsite is in Lisbon.",
        kind="decision",
        sources=[ALICE_LISBON],
    )["saved"]["memoryId"]
    retired = _call(alice["retire_memory"], memoryId=saved, reason="the offsite was cancelled")
    assert retired["retired"]["retired"] == "the offsite was cancelled"
    current = _call(alice["recall_memories"], query="offsite Lisbon")["memories"]
    assert saved not in [m["memoryId"] for m in current]
    history = _call(alice["recall_memories"], query="offsite Lisbon", includeSuperseded=True)
    assert saved in [m["memoryId"] for m in history["memories"]]


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"query": "x", "limit": MAX_MEMORIES + 1}, "limit"),
        ({"query": "x", "turns": MAX_TURNS + 1}, "turns"),
        ({"query": "x", "kinds": ["gossip"]}, "kinds"),
        ({"query": "x" * 1001}, "1000"),
    ],
)
def test_recall_is_bounded_and_says_what_to_change(es, searchers, arguments, says):
    alice = _tools(es, searchers, "alice")
    result = alice["recall_memories"].call({"innerThought": THOUGHT, **arguments})
    assert result.is_error and says in result.text, result.text


def test_many_memories_are_cut_at_the_limit(es, searchers):
    writer = MemoryWriter(es, searchers.alias, user_id="alice")
    for n in range(MAX_MEMORIES + 5):
        writer.save_memory(f"Budget line {n} is approved.", "fact", ["sample-012"])
    tool = recall_memories_tool(searchers.memories(user_id="alice"))
    found = _call(tool, query="budget line approved", limit=MAX_MEMORIES)
    assert len(found["memories"]) == MAX_MEMORIES
    assert len(_call(tool, query="budget line approved")["memories"]) == 10  # the default


def test_a_contact_bound_tool_keeps_to_its_contact(es, searchers):
    """acme's memories saved for contact c-42 in inbox web stay out of c-77's recall."""
    mine = _tools(es, searchers, "acme", contact_id="c-42", inbox_id="web")
    other = _tools(es, searchers, "acme", contact_id="c-77", inbox_id="web")
    kept = _call(
        mine["save_memory"],
        statement="The replacement for order 7731 ships by express.",
        kind="fact",
        sources=["sample-019"],
    )["saved"]["memoryId"]
    assert kept in [m["memoryId"] for m in _call(mine["recall_memories"], query="order 7731")[
        "memories"]]  # fmt: skip
    text = other["recall_memories"].call({"innerThought": THOUGHT, "query": "order 7731"}).text
    assert kept not in text


def test_the_tools_take_only_their_own_writer(es, searchers):
    """save and retire, built apart, are bound to their writer's user."""
    bob_writer = MemoryWriter(es, searchers.alias, user_id="bob")
    save, retire = save_memory_tool(bob_writer), retire_memory_tool(bob_writer)
    result = save.call(
        {"innerThought": THOUGHT, "statement": "Blue logo.", "kind": "decision",
         "sources": [ALICE_BILLING]}
    )  # fmt: skip
    assert result.is_error and ALICE_BILLING in result.text
    assert retire.call({"innerThought": THOUGHT, "memoryId": "nope", "reason": "x"}).is_error


_WORDS = ["billing", "Postgres", "launch", "Friday", "secret", "offsite", "October", "data"]


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    words=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4),
    user=st.sampled_from(["alice", "bob"]),
    kinds=st.none() | st.lists(st.sampled_from(["decision", "instruction", "fact"]), min_size=1),
)
def test_no_query_returns_a_memory_of_another_user(es, searchers, saved, words, user, kinds):
    other = "bob" if user == "alice" else "alice"
    theirs = searchers.memories(user_id=other).list(include_superseded=True).memories
    assert theirs  # the property is about memories that exist
    tool = _tools(es, searchers, user)["recall_memories"]
    arguments = {"query": " ".join(words), "includeSuperseded": True, "turns": 3}
    if kinds is not None:
        arguments["kinds"] = kinds
    text = tool.call({"innerThought": THOUGHT, **arguments}).text
    assert not any(memory.memory_id in text for memory in theirs), text


def test_long_statements_share_the_answers_bound_as_event_texts_do(es, searchers):
    """Twenty statements of 1,900 characters would answer 38,000: each is cut to its
    share of the bound (20,000 characters), marked with its whole length."""
    writer = MemoryWriter(es, searchers.alias, user_id="alice")
    filler = " ".join(["Lisbon venue detail"] * 100)
    for n in range(MAX_MEMORIES):
        writer.save_memory(f"Venue note {n}: {filler}"[:1900], "fact", ["sample-010"])
    bounds = OutputBounds()
    tool = recall_memories_tool(searchers.memories(user_id="alice"), bounds=bounds)
    found = _call(tool, query="venue note Lisbon detail", limit=MAX_MEMORIES)["memories"]
    long = [m for m in found if m["statement"].startswith("Venue note")]
    assert len(long) == MAX_MEMORIES
    assert all(m["statement"].endswith("…[truncated, 1,900 characters]") for m in long)
    assert sum(len(m["statement"]) for m in found) <= bounds.answer_chars
