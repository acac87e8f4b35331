"""An ADK agent remembers through our memory service, on a real node: a real `Runner`
with a scripted model (ADK's way of testing agents), `load_memory` and
`PreloadMemoryTool`; a session kept in ADK's `DatabaseSessionService` (SQLite) and
added after every turn, stored once; memories added without a timestamp, stored once
and kept out once deleted; deletion by id and by scope, with replays kept out; ADK's
own factory building the service from `session-recall://`; and a frozen node that
stalls no other coroutine."""

import asyncio
import itertools
import time
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch
from google.adk.agents.llm_agent import LlmAgent
from google.adk.cli.service_registry import load_services_module
from google.adk.cli.utils.service_factory import create_memory_service_from_options
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.platform.time import reset_time_provider, set_time_provider
from google.adk.runners import Runner
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.sessions.schemas.v0 import Base as LegacyTables
from google.adk.sessions.session import Session
from google.adk.tools.load_memory_tool import load_memory_tool
from google.adk.tools.preload_memory_tool import PreloadMemoryTool
from google.genai import types
from sqlalchemy import create_engine

from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError, SessionRecallError
from session_recall.integrations.adk import SessionRecallMemoryService, memory_user, register
from session_recall.recall import Searchers
from tests.support.adk import ScriptedModel, request_text
from tests.support.network import LIVENESS_MARGIN_S, silent_server

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


def _stored(es: Elasticsearch, alias: str, **terms: str) -> int:
    """How many events of ADK's (APP, USER) match `terms`, as stored now."""
    es.indices.refresh(index=alias)
    fields = {"user_id": memory_user(APP, USER), **terms}
    query = {"bool": {"filter": [{"term": {k: v}} for k, v in fields.items()]}}
    return int(es.count(index=alias, query=query)["count"])


@pytest.mark.parametrize("schema", ["legacy", "current"])
async def test_a_session_kept_in_a_database_and_added_after_every_turn_is_stored_once(
    memory, settings, es: Elasticsearch, tmp_path: Path, schema: str
):
    """ADK's `DatabaseSessionService` over SQLite, the session reloaded for every turn.
    A database of ADK's legacy schema (which 2.13 still runs on, as do Vertex's stores)
    keeps an event's time as a `datetime`, to the microsecond: the session the runner
    holds has the float, the one read back the rounded value. Added after each turn in
    both forms, as ADK's after-agent callback and an application do, no event is
    stored twice; nor with the current schema, which keeps the float."""
    path = tmp_path / "sessions.db"
    if schema == "legacy":  # a database an earlier ADK release made
        engine = create_engine(f"sqlite:///{path}")
        LegacyTables.metadata.create_all(engine)
        engine.dispose()
    # ADK's clock, with a fraction below the microsecond on every tick, as time.time()
    # has on most: the case the database rounds.
    ticks = itertools.count()
    start = float(int(time.time())) + 0.1234567
    set_time_provider(lambda: start + next(ticks) * 0.0250000371)
    sessions = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{path}")

    async def remember(context) -> None:  # ADK's documented after-agent callback
        await context.add_session_to_memory()

    agent = LlmAgent(
        name="barista",
        model=ScriptedModel.answering("Noted.", "Jasmine it is.", "No sugar, then."),
        after_agent_callback=remember,
    )
    runner = Runner(app_name=APP, agent=agent, session_service=sessions, memory_service=memory)
    try:
        session = await sessions.create_session(app_name=APP, user_id=USER)
        for text in (FACT, "Make it a pot.", "And no sugar."):
            message = types.UserContent(text)
            async for _ in runner.run_async(user_id=USER, session_id=session.id,
                                            new_message=message):  # fmt: skip
                pass
            reloaded = await sessions.get_session(app_name=APP, user_id=USER, session_id=session.id)
            assert reloaded is not None
            await memory.add_session_to_memory(reloaded)
    finally:
        reset_time_provider()
        await sessions.close()
    said = [event for event in reloaded.events if event.content and event.content.parts]
    assert len(said) == 6  # three turns of the user and three answers
    assert _stored(es, settings.index, session_id=session.id) == len(said)
    found = (await memory.search_memory(app_name=APP, user_id=USER, query="pot")).memories
    assert found[0].content.parts[0].text == "Make it a pot."


async def test_a_memory_without_a_timestamp_is_stored_once_and_stays_deleted(
    memory, settings, es: Elasticsearch
):
    """ADK's `MemoryEntry` may come without a timestamp: it keeps the instant of its
    first addition, so adding it again stores nothing twice (with an id of its own or
    without one), and once deleted by id, adding it again does not bring it back."""
    note = MemoryEntry(
        id="dup-1",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="Allergic to shellfish.")]),
    )
    unnamed = MemoryEntry(
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="Speaks Portuguese.")]),
    )
    for _ in range(3):
        await memory.add_memory(app_name=APP, user_id=USER, memories=[note, unnamed, note])
    assert _stored(es, settings.index, event_id="dup-1") == 1
    assert _stored(es, settings.index, session_id="adk-memories") == 2
    [found] = (await memory.search_memory(app_name=APP, user_id=USER, query="shellfish")).memories
    assert found.id == "dup-1"

    await memory.delete_memory(app_name=APP, user_id=USER, memory_id="dup-1")
    await memory.add_memory(app_name=APP, user_id=USER, memories=[note])
    assert _stored(es, settings.index, event_id="dup-1") == 0
    assert not (await memory.search_memory(app_name=APP, user_id=USER, query="shellfish")).memories
    # The other memory is untouched, and a memory of another id is stored as usual.
    assert (await memory.search_memory(app_name=APP, user_id=USER, query="Portuguese")).memories
    other = note.model_copy(update={"id": "dup-2"})
    await memory.add_memory(app_name=APP, user_id=USER, memories=[other])
    assert _stored(es, settings.index, event_id="dup-2") == 1
    # The whole scope erased: the same entry added afterwards is a new memory.
    await memory.delete_memory(app_name=APP, user_id=USER)
    await memory.add_memory(app_name=APP, user_id=USER, memories=[other])
    assert _stored(es, settings.index, event_id="dup-2") == 1


async def test_add_memory_and_events_are_searchable_and_stored_once(memory):
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
        started = time.monotonic()
        with pytest.raises(SessionRecallError) as refused:
            await memory.search_memory(app_name=APP, user_id=USER, query="jasmine")
        took = time.monotonic() - started
        searching = False
        beating.cancel()
    # Liveness, not speed: the call ends near the service's 2 s deadline, not at the
    # client's own 30 s.
    assert took < 2.0 + LIVENESS_MARGIN_S, took
    # A search that blocked the loop would leave the ticker no turn until it returned.
    assert ticked_while_searching > 0, "the event loop was blocked while the node hung"
    assert str(refused.value).startswith("Elasticsearch did not answer the search")
