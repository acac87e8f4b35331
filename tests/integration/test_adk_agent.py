"""An ADK agent remembers through our memory service, on a real node: a real `Runner`
with a scripted model (ADK's way of testing agents), `load_memory` and
`PreloadMemoryTool`; deletion by id and by scope, with replays kept out; ADK's own
factory building the service from `session-recall://`; and a frozen node that stalls
no other coroutine."""

import asyncio
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch
from google.adk.agents.llm_agent import LlmAgent
from google.adk.cli.service_registry import load_services_module
from google.adk.cli.utils.service_factory import create_memory_service_from_options
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.tools.load_memory_tool import load_memory_tool
from google.adk.tools.preload_memory_tool import PreloadMemoryTool
from google.genai import types

from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError, SessionRecallError
from session_recall.integrations.adk import SessionRecallMemoryService, memory_user, register
from session_recall.recall import Searchers
from tests.support.adk import ScriptedModel, request_text
from tests.support.network import silent_server

pytestmark = pytest.mark.integration

APP, USER = "tea-shop", "ana"
FACT = "I prefer jasmine tea, never with sugar."


@pytest.fixture
def memory(settings: Settings) -> SessionRecallMemoryService:
    return SessionRecallMemoryService(settings=settings.model_copy(update={"embedder": "none"}))


async def _run(
    agent: LlmAgent, memory: SessionRecallMemoryService, text: str
) -> tuple[list[Event], Session]:
    sessions = InMemorySessionService()
    runner = Runner(app_name=APP, agent=agent, session_service=sessions, memory_service=memory)
    session = await sessions.create_session(app_name=APP, user_id=USER)
    message = types.UserContent(text)
    events = [e async for e in runner.run_async(user_id=USER, session_id=session.id,
                                                new_message=message)]  # fmt: skip
    stored = await sessions.get_session(app_name=APP, user_id=USER, session_id=session.id)
    assert stored is not None
    return events, stored


async def _remember(memory: SessionRecallMemoryService) -> Session:
    """Session 1: the user states the fact, the agent acknowledges, and the session
    goes to memory."""
    agent = LlmAgent(name="barista", model=ScriptedModel.answering("Noted."))
    _, first = await _run(agent, memory, FACT)
    await memory.add_session_to_memory(first)
    return first


async def test_in_a_later_session_load_memory_brings_back_what_was_said(memory):
    await _remember(memory)
    model = ScriptedModel.answering(
        types.Part.from_function_call(name="load_memory", args={"query": "jasmine tea"}),
        "You like jasmine tea.",
    )
    agent = LlmAgent(name="barista", model=model, tools=[load_memory_tool])
    events, _ = await _run(agent, memory, "What tea do I like?")
    [response] = [
        part.function_response
        for event in events
        if event.content
        for part in event.content.parts or []
        if part.function_response
    ]
    assert response.name == "load_memory"
    memories = response.response["result"].memories
    assert [m.content.parts[0].text for m in memories] == [FACT]
    assert memories[0].author == "user"
    assert memories[0].custom_metadata["event_type"] == "user_message"
    # The tool's answer reaches the model's second call.
    assert FACT in request_text(model.requests[1])


async def test_preload_memory_puts_what_was_said_before_the_model(memory):
    await _remember(memory)
    model = ScriptedModel.answering("Jasmine, no sugar.")
    agent = LlmAgent(name="barista", model=model, tools=[PreloadMemoryTool()])
    await _run(agent, memory, "Which tea do I prefer?")
    # ADK 2.13 inserts the memories as content just before the user's turn (earlier
    # versions put them in the system instruction): either way the model sees them.
    assert f"user: {FACT}" in request_text(model.requests[0])
    # PreloadMemoryTool asks with the whole message: a long one still recalls.
    long = await memory.search_memory(app_name=APP, user_id=USER, query="jasmine " * 300)
    assert [m.content.parts[0].text for m in long.memories] == [FACT]


async def test_deleting_one_memory_or_the_scope_keeps_replays_out(
    memory, settings, es: Elasticsearch
):
    first = await _remember(memory)
    found = await memory.search_memory(app_name=APP, user_id=USER, query="jasmine")
    [entry] = found.memories
    reply = await memory.search_memory(app_name=APP, user_id=USER, query="noted")
    assert len(reply.memories) == 1

    await memory.delete_memory(app_name=APP, user_id=USER, memory_id=entry.id)
    await memory.add_session_to_memory(first)  # a replay of the whole session
    assert not (await memory.search_memory(app_name=APP, user_id=USER, query="jasmine")).memories
    kept = (await memory.search_memory(app_name=APP, user_id=USER, query="noted")).memories
    assert [m.content.parts[0].text for m in kept] == ["Noted."]

    await memory.delete_memory(app_name=APP, user_id=USER)
    await memory.add_session_to_memory(first)
    assert not (await memory.search_memory(app_name=APP, user_id=USER, query="noted")).memories
    # The CLI and HTTP reach the same memory by its user id: nothing is left there.
    reads = Searchers(es, settings.index, b"adk-scope-test-cursor-key-32byt!")
    assert not reads.cross_session(user_id=memory_user(APP, USER)).search("noted").items


async def test_add_memory_and_events_are_searchable_and_stored_once(memory):
    from google.adk.memory.memory_entry import MemoryEntry

    note = MemoryEntry(
        id="m-1",
        author="user",
        timestamp="2026-11-02T09:00:00Z",
        content=types.Content(role="user", parts=[types.Part(text="Allergic to peanuts.")]),
    )
    for _ in range(2):  # ADK: a memory or a session may be added more than once
        await memory.add_memory(app_name=APP, user_id=USER, memories=[note],
                                custom_metadata={"source": "intake form"})  # fmt: skip
    [found] = (await memory.search_memory(app_name=APP, user_id=USER, query="peanuts")).memories
    assert (found.id, found.author) == ("m-1", "user")
    assert found.custom_metadata["source"] == "intake form"
    assert found.custom_metadata["session_id"] == "adk-memories"
    assert found.timestamp is not None and found.timestamp.startswith("2026-11-02T09:00:00")


async def test_adks_own_factory_builds_the_service_from_its_uri(settings, tmp_path: Path):
    register()
    env = {"ELASTICSEARCH_URL": settings.elasticsearch_url or "", "SESSION_RECALL_EMBEDDER": "none"}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        made = create_memory_service_from_options(
            base_dir=tmp_path, memory_service_uri=f"session-recall://{settings.index}?mode=keyword"
        )
        assert isinstance(made, SessionRecallMemoryService)
        assert (made.alias, made.mode) == (settings.index, "keyword")
        await _remember(made)
        found = (await made.search_memory(app_name=APP, user_id=USER, query="jasmine")).memories
        assert [m.content.parts[0].text for m in found] == [FACT]
        # An agents folder's services.yaml names the class; ADK builds it with the URI.
        (tmp_path / "services.yaml").write_text(
            "services:\n  - scheme: recall-yaml\n    type: memory\n"
            "    class: session_recall.integrations.adk.SessionRecallMemoryService\n"
        )
        load_services_module(str(tmp_path))
        by_yaml = create_memory_service_from_options(
            base_dir=tmp_path, memory_service_uri=f"recall-yaml://{settings.index}"
        )
        assert isinstance(by_yaml, SessionRecallMemoryService)
        assert by_yaml.alias == settings.index
    with pytest.raises(ConfigurationError, match="no credentials"):
        SessionRecallMemoryService(uri="session-recall://elastic:secret@my-index")
    with pytest.raises(ConfigurationError, match="search mode"):
        SessionRecallMemoryService(uri="session-recall://my-index?mode=fuzzy")


async def test_a_frozen_node_stalls_no_other_coroutine_and_the_call_fails_in_time(
    settings: Settings,
):
    """A node that takes the connection and never answers: the search waits off the
    loop while another coroutine keeps running, and fails at the service's deadline
    with a message that says so."""
    searching = True
    ticked_while_searching = 0

    async def ticker() -> None:
        nonlocal ticked_while_searching
        while True:
            await asyncio.sleep(0.05)
            ticked_while_searching += searching

    with silent_server() as hung:
        frozen = settings.model_copy(update={"elasticsearch_url": hung, "embedder": "none"})
        memory = SessionRecallMemoryService(settings=frozen, timeout=2.0)
        beating = asyncio.create_task(ticker())
        with pytest.raises(SessionRecallError) as refused:
            await memory.search_memory(app_name=APP, user_id=USER, query="jasmine")
        searching = False
        beating.cancel()
    # A search that blocked the loop would leave the ticker no turn until it returned.
    assert ticked_while_searching > 0, "the event loop was blocked while the node hung"
    assert str(refused.value).startswith("Elasticsearch did not answer the search")
