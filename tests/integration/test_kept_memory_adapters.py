"""Kept memories through the framework adapters, on a real node: ADK's memory service
(search_memory gives the user's current memories before the turns; add_memory may
save one), LangChain's and the OpenAI Agents SDK's tools for recall_memories,
save_memory and retire_memory. Each is bound to its user: another user's memories
are never listed, searched or returned, and their events are no sources."""

import json

import pytest
from agents import Agent, Runner
from agents.testing import ScriptedModel, assistant_message, function_call
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types

from session_recall.config import Settings
from session_recall.core.errors import SessionRecallError
from session_recall.integrations.adk import SessionRecallMemoryService
from session_recall.integrations.adk.kept import AUTHOR, KEY
from session_recall.integrations.langchain import kept_memory_tools as langchain_tools
from session_recall.integrations.openai_agents import (
    SessionRecallSession,
    cross_session_search_tool,
    kept_memory_tools,
)
from session_recall.integrations.store import EventStore
from tests.support.samples import THOUGHT, ingested_samples

pytestmark = pytest.mark.integration

APP = "tea-shop"


@pytest.fixture(scope="module")
def settings(es_url: str, module_alias: str, tmp_path_factory) -> Settings:
    home = tmp_path_factory.mktemp("home")
    return ingested_samples(es_url, module_alias, home, SESSION_RECALL_ENRICH=False)


def _session(user: str, session_id: str, *turns: tuple[str, str]) -> Session:
    events = [
        Event(
            id=event_id,
            invocation_id=f"inv-{event_id}",
            author="user",
            timestamp=1_780_000_000 + n,
            content=types.Content(role="user", parts=[types.Part(text=text)]),
        )
        for n, (event_id, text) in enumerate(turns)
    ]
    return Session(app_name=APP, user_id=user, id=session_id, last_update_time=0, events=events)


def _kept(text: str, **memory: object) -> MemoryEntry:
    return MemoryEntry(
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        custom_metadata={KEY: memory},
    )


async def test_adk_search_memory_gives_the_users_memories_before_the_turns(settings):
    service = SessionRecallMemoryService(settings=settings, mode="keyword")
    try:
        await service.add_session_to_memory(
            _session("ana", "s-1", ("ana-1", "I take my jasmine tea without sugar."))
        )
        await service.add_session_to_memory(
            _session("ben", "s-2", ("ben-1", "I take my jasmine tea with three sugars."))
        )
        await service.add_memory(
            app_name=APP,
            user_id="ana",
            memories=[_kept("Ana takes jasmine tea without sugar.", kind="preference",
                            sources=["ana-1"], subject="tea")],
        )  # fmt: skip
        await service.add_memory(
            app_name=APP,
            user_id="ben",
            memories=[_kept("Ben takes three sugars.", kind="preference", sources=["ben-1"])],
        )
        found = await service.search_memory(app_name=APP, user_id="ana", query="jasmine tea sugar")
        [first, *rest] = found.memories
        assert first.author == AUTHOR and first.custom_metadata[KEY]["kind"] == "preference"
        assert first.content.parts[0].text == "Ana takes jasmine tea without sugar."
        assert first.custom_metadata[KEY]["sources"] == ["ana-1"]
        assert [entry.id for entry in rest] == ["ana-1"]  # then the turn it came from
        text = " ".join(p.text for m in found.memories for p in m.content.parts)
        assert "three sugars" not in text and "Ben" not in text
    finally:
        service.close()


async def test_adk_add_memory_refuses_another_users_event_as_a_source(settings):
    service = SessionRecallMemoryService(settings=settings, mode="keyword")
    try:
        await service.add_session_to_memory(_session("cy", "s-3", ("cy-1", "I like oolong.")))
        with pytest.raises(SessionRecallError) as refused:
            await service.add_memory(
                app_name=APP,
                user_id="cy",
                memories=[_kept("Cy takes sugar.", kind="preference", sources=["ben-1"])],
            )
        assert "ben-1" in str(refused.value)
        with pytest.raises(SessionRecallError):  # a kept memory needs its sources
            await service.add_memory(
                app_name=APP, user_id="cy", memories=[_kept("Cy likes oolong.", kind="fact")]
            )
        found = await service.search_memory(app_name=APP, user_id="cy", query="sugar oolong")
        assert [m.author for m in found.memories] == ["user"]  # only cy's own turn
    finally:
        service.close()


def _tool_calls(tools: dict, name: str, **arguments) -> str:
    return tools[name].invoke({"innerThought": THOUGHT, **arguments})


def test_langchain_tools_save_recall_and_retire_as_their_user_only(settings):
    store = EventStore(settings)
    try:
        alice = {t.name: t for t in langchain_tools("alice", store=store)}
        bob = {t.name: t for t in langchain_tools("bob", store=store)}
        assert sorted(alice) == ["recall_memories", "retire_memory", "save_memory"]
        saved = json.loads(
            _tool_calls(alice, "save_memory", statement="The offsite moves to October.",
                        kind="correction", sources=["sample-009"])
        )["saved"]  # fmt: skip
        recalled = json.loads(_tool_calls(alice, "recall_memories", query="when is the offsite?"))
        assert saved["memoryId"] in [m["memoryId"] for m in recalled["memories"]]

        for query in ("offsite October", "when is the offsite?"):
            assert saved["memoryId"] not in _tool_calls(
                bob, "recall_memories", query=query, includeSuperseded=True, turns=5
            )
        stolen = _tool_calls(bob, "save_memory", statement="x", kind="fact", sources=["sample-009"])
        assert stolen.startswith("Error: ") and "sample-009" in stolen
        refused = _tool_calls(bob, "retire_memory", memoryId=saved["memoryId"], reason="x")
        assert refused.startswith("Error: ") and "No memory of this user" in refused
        smuggled = _tool_calls(bob, "recall_memories", query="offsite", userId="alice")
        assert "unknown argument 'userId'" in smuggled

        retired = _tool_calls(alice, "retire_memory", memoryId=saved["memoryId"], reason="moved")
        assert json.loads(retired)["retired"]["retired"] == "moved"
        assert read_only_has_no_writers(store)
    finally:
        store.close()


def read_only_has_no_writers(store: EventStore) -> bool:
    return [t.name for t in langchain_tools("alice", store=store, writes=False)] == [
        "recall_memories"
    ]


async def test_langchain_tools_run_async(settings):
    store = EventStore(settings)
    try:
        [recall] = langchain_tools("alice", store=store, writes=False)
        text = await recall.ainvoke({"innerThought": THOUGHT, "query": "billing", "turns": 2})
        assert "turns" in json.loads(text)
    finally:
        store.close()


async def test_an_openai_agents_miner_saves_and_the_live_agent_recalls(settings):
    """The background agent reads alice's history with cross_session_search (event ids
    on) and saves what it concludes; the live agent answers from recall_memories."""
    store = EventStore(settings)
    try:
        session = SessionRecallSession("s-miner", user_id="alice", store=store)
        model = ScriptedModel()
        miner = Agent(
            name="miner",
            model=model,
            tools=[
                cross_session_search_tool(session.cross_session(), event_ids=True),
                *kept_memory_tools(session),
            ],
        )
        model.enqueue(
            [function_call("cross_session_search", {"innerThought": "t", "query": "remember",
                                                    "since": "2026-06-01T00:00:00Z"}, call_id="c1")]
        )  # fmt: skip
        model.enqueue(
            [function_call("save_memory", {"innerThought": "t", "kind": "instruction",
                                           "statement": "Billing data never leaves Postgres.",
                                           "sources": ["sample-008"]}, call_id="c2")]
        )  # fmt: skip
        model.enqueue([assistant_message("Saved one memory.")])
        await Runner.run(miner, "Mine what is new.")
        outputs = [
            i["output"] for i in model.last_call.input if i.get("type") == "function_call_output"
        ]
        assert '"eventId":"sample-008"' in outputs[0] and '"created":true' in outputs[1]

        live = Agent(name="live", model=model, tools=kept_memory_tools(session, writes=False))
        asked = {"innerThought": "t", "query": "where is billing data?"}
        model.enqueue([function_call("recall_memories", asked, call_id="c3")])
        model.enqueue([assistant_message("In Postgres.")])
        await Runner.run(live, "Where does billing data live?")
        [recalled] = [
            i["output"] for i in model.last_call.input if i.get("type") == "function_call_output"
        ]
        assert "Billing data never leaves Postgres." in recalled

        bob = SessionRecallSession("s-bob", user_id="bob", store=store)
        [bobs_recall] = kept_memory_tools(bob, writes=False)
        text = await bobs_recall.on_invoke_tool(
            None, json.dumps({"innerThought": "t", "query": "billing data Postgres", "turns": 5})
        )
        assert "Postgres" not in text and "sample-008" not in text
    finally:
        store.close()
