"""The OpenAI Agents SDK's own session tests, run against `SessionRecallSession` on a
real node.

Ported from openai-agents-python `tests/extensions/memory/test_sqlalchemy_session.py`
at commit 7f7a44f8dc0650296bd5ab6c745c9bcbaa6ac3b7 (main, 2026-08-22), the newest copy
reachable here: the 0.24.0 tag's commit was not. Every test of its public API is here
and passes against openai-agents 0.24.0, the pinned version. Each session is made with
`_session(...)` where the original calls `SQLAlchemySession.from_url(...)`, and gets a
fresh session id, since the node outlives a test (the original's in-memory SQLite
does not). `get_text_message` is the SDK's `agents.testing.assistant_message`.

Left out, each because it tests SQL or SQLAlchemy rather than the protocol:
- `defaults_to_escaped_non_ascii_storage`, `can_store_non_ascii_without_escaping`:
  the JSON escaping of a SQL column (`ensure_ascii`). What they hold for callers, that
  non-ASCII items round-trip unchanged, is `test_items_round_trip_unchanged` below.
- `sqlite_fallback_reserves_writer_before_tail_claim`,
  `pop_item_supports_unknown_delete_rowcount`,
  `pop_item_retries_returning_claim_lost_to_concurrent_delete`: SQL dialects' DELETE
  ... RETURNING. Our pop's claim is a conditional delete (`if_seq_no`), held by
  `test_concurrent_pop_item_returns_each_row_once` and its larger form below.
- `mutation_cancellation_waits_for_transaction_exit`: SQL transactions.
- `pop_item_skips_corrupt_most_recent`, `get_items_limit_skips_corrupt_newest_rows`,
  `pop_item_returns_none_after_dropping_only_corrupt_rows`: rows of invalid JSON
  inserted with SQL; Elasticsearch stores no invalid JSON. The nearest case here, an
  event of another surface that is no item, is `test_events_of_other_surfaces...`.
- The nine `add_items_concurrent_first_access...`, `waits_for_transient_sqlite_write_lock`,
  `cancelled_waiter_does_not_strand_table_init_lock`,
  `create_tables_false_does_not_allocate_shared_init_lock`: table creation and SQLite
  locks (the alias is made by `session-recall setup`).
- `get_items_same_timestamp_consistent_order`, `pop_item_same_timestamp_returns_latest`,
  `get_items_orders_by_id_for_ties`: they rewrite `created_at` with SQL and inspect the
  SQL statements. Our order is the events' (instant, then event id), both stamped by
  `add_items` in the order given; `test_items_keep_their_order_across_calls` holds it
  for the same items (a reasoning item and a message added together).
- `engine_property_*`, `sqlite_configuration_registry_*`: the SQLAlchemy engine.
"""

import asyncio
import contextlib
import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any, cast

import pytest
from agents import Agent, RunConfig, Runner, TResponseInputItem
from agents.memory import SessionSettings
from agents.testing import ScriptedModel, assistant_message
from elasticsearch import ConnectionError as ConnectionFailed
from elasticsearch import Elasticsearch

from session_recall.config import Settings
from session_recall.core.errors import SessionRecallError
from session_recall.core.instant import Instant
from session_recall.indexer import (
    Event,
    IndexerError,
    InvalidEvent,
    Scope,
    Submission,
    Writer,
    erase,
)
from session_recall.integrations.openai_agents import SessionRecallSession
from session_recall.integrations.store import EventStore
from tests.support.seam import Seam

pytestmark = pytest.mark.integration

get_text_message = assistant_message


@pytest.fixture(scope="module")
def store(es_url: str, module_alias: str) -> Iterator[EventStore]:
    store = EventStore(
        Settings(ELASTICSEARCH_URL=es_url, SESSION_RECALL_EMBEDDER="none"), index=module_alias
    )
    yield store
    store.client.close()


@pytest.fixture
def make(store: EventStore):
    def _session(session_id: str, **options: Any) -> SessionRecallSession:
        user = options.pop("user_id", "u-agents")
        unique = f"{session_id}-{uuid.uuid4().hex[:8]}"
        return SessionRecallSession(unique, user_id=user, store=store, **options)

    return _session


def _make_message_item(item_id: str, text_value: str) -> TResponseInputItem:
    return cast(
        TResponseInputItem,
        {
            "id": item_id,
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": text_value, "annotations": [], "logprobs": []}
            ],
        },
    )


def _make_reasoning_item(item_id: str, summary_text: str) -> TResponseInputItem:
    return cast(
        TResponseInputItem,
        {
            "id": item_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": summary_text}],
        },
    )


def _item_ids(items: list[TResponseInputItem]) -> list[str]:
    return [cast(dict[str, Any], item)["id"] for item in items]


@pytest.fixture
def agent() -> Agent:
    return Agent(name="test", model=ScriptedModel())


# --- ported ---------------------------------------------------------------------------


async def test_sqlalchemy_session_direct_ops(make):
    session = make("direct_ops_test")
    items: list[TResponseInputItem] = [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi there!"},
    ]
    await session.add_items(items)

    retrieved = await session.get_items()
    assert len(retrieved) == 2
    assert retrieved[0].get("content") == "Hello"
    assert retrieved[1].get("content") == "Hi there!"

    popped = await session.pop_item()
    assert popped is not None
    assert popped.get("content") == "Hi there!"
    retrieved_after_pop = await session.get_items()
    assert len(retrieved_after_pop) == 1
    assert retrieved_after_pop[0].get("content") == "Hello"

    await session.clear_session()
    assert len(await session.get_items()) == 0


async def test_runner_integration(make, agent: Agent):
    session = make("runner_integration_test")
    assert isinstance(agent.model, ScriptedModel)
    agent.model.enqueue([get_text_message("San Francisco")])
    result1 = await Runner.run(agent, "What city is the Golden Gate Bridge in?", session=session)
    assert result1.final_output == "San Francisco"

    agent.model.enqueue([get_text_message("California")])
    result2 = await Runner.run(agent, "What state is it in?", session=session)
    assert result2.final_output == "California"

    last_input = agent.model.calls[-1].input
    assert len(last_input) > 1
    assert any("Golden Gate Bridge" in str(item.get("content", "")) for item in last_input)


async def test_session_isolation(make, agent: Agent):
    session1 = make("session_1")
    session2 = make("session_2")
    assert isinstance(agent.model, ScriptedModel)
    agent.model.enqueue([get_text_message("I like cats.")])
    await Runner.run(agent, "I like cats.", session=session1)
    agent.model.enqueue([get_text_message("I like dogs.")])
    await Runner.run(agent, "I like dogs.", session=session2)

    agent.model.enqueue([get_text_message("You said you like cats.")])
    result = await Runner.run(agent, "What animal did I say I like?", session=session1)
    assert "cats" in result.final_output.lower()
    assert "dogs" not in result.final_output.lower()
    # What the model was given: session 1's history only.
    assert "dogs" not in json.dumps(agent.model.calls[-1].input)


async def test_get_items_with_limit(make):
    session = make("limit_test")
    await session.add_items(
        [
            {"role": "user", "content": "1"},
            {"role": "assistant", "content": "2"},
            {"role": "user", "content": "3"},
            {"role": "assistant", "content": "4"},
        ]
    )
    latest_2 = await session.get_items(limit=2)
    assert [item.get("content") for item in latest_2] == ["3", "4"]
    assert len(await session.get_items()) == 4
    assert len(await session.get_items(limit=10)) == 4


async def test_pop_from_empty_session(make):
    assert await make("empty_session").pop_item() is None


async def test_concurrent_pop_item_returns_each_row_once(make, store: EventStore):
    writer = make("concurrent_pop")
    other = SessionRecallSession(writer.session_id, user_id=writer.user_id, store=store)
    await writer.add_items(
        [{"role": "user", "content": "first"}, {"role": "assistant", "content": "second"}]
    )
    popped = await asyncio.wait_for(asyncio.gather(writer.pop_item(), other.pop_item()), timeout=30)
    contents = {cast(dict[str, Any], item)["content"] for item in popped if item is not None}
    assert contents == {"first", "second"}


async def test_get_items_limit_returns_fewer_when_history_exhausted(make):
    session = make("limit_exhausted")
    await session.add_items([{"role": "user", "content": "only valid"}])
    retrieved = await session.get_items(limit=5)
    assert [item.get("content") for item in retrieved] == ["only valid"]


async def test_add_empty_items_list(make):
    session = make("add_empty_test")
    assert len(await session.get_items()) == 0
    await session.add_items([])
    assert len(await session.get_items()) == 0


async def test_session_settings_default(make):
    session = make("default_settings_test")
    assert isinstance(session.session_settings, SessionSettings)
    assert session.session_settings.limit is None


@pytest.mark.parametrize("use_dictionary", [False, True], ids=["class", "dictionary"])
async def test_session_settings_from_url(make, use_dictionary: bool):
    session = make(
        "from_url_settings_test",
        session_settings={"limit": 5} if use_dictionary else SessionSettings(limit=5),
    )
    assert isinstance(session.session_settings, SessionSettings)
    assert session.session_settings.limit == 5


async def test_get_items_uses_session_settings_limit(make):
    session = make("uses_settings_limit_test", session_settings=SessionSettings(limit=3))
    await session.add_items([{"role": "user", "content": f"Message {i}"} for i in range(5)])
    retrieved = await session.get_items()
    assert [item.get("content") for item in retrieved] == ["Message 2", "Message 3", "Message 4"]


async def test_get_items_explicit_limit_overrides_session_settings(make):
    session = make("explicit_override_test", session_settings=SessionSettings(limit=5))
    await session.add_items([{"role": "user", "content": f"Message {i}"} for i in range(10)])
    retrieved = await session.get_items(limit=2)
    assert [item.get("content") for item in retrieved] == ["Message 8", "Message 9"]


async def test_session_settings_resolve():
    base = SessionSettings(limit=100)
    final = base.resolve(SessionSettings(limit=50))
    assert final.limit == 50
    assert base.limit == 100
    assert base.resolve(None).limit == 100


async def test_runner_with_session_settings_override(make, agent: Agent):
    session = make("runner_override_test", session_settings=SessionSettings(limit=100))
    await session.add_items([{"role": "user", "content": f"Turn {i}"} for i in range(10)])
    assert isinstance(agent.model, ScriptedModel)
    agent.model.enqueue([get_text_message("Got it")])
    await Runner.run(
        agent,
        "New question",
        session=session,
        run_config=RunConfig(session_settings=SessionSettings(limit=2)),
    )
    last_input = agent.model.calls[-1].input
    history_items = [item for item in last_input if item.get("content") != "New question"]
    assert len(history_items) == 2


# --- ours: what the issue asks beyond the port ------------------------------------------


async def test_ids_are_case_sensitive(make, store: EventStore):
    upper = make("Case")
    lower = SessionRecallSession(upper.session_id.lower(), user_id=upper.user_id, store=store)
    await upper.add_items([{"role": "user", "content": "upper"}])
    await lower.add_items([{"role": "user", "content": "lower"}])
    assert [i.get("content") for i in await upper.get_items()] == ["upper"]
    assert [i.get("content") for i in await lower.get_items()] == ["lower"]
    other_user = SessionRecallSession(upper.session_id, user_id=upper.user_id.upper(), store=store)
    assert await other_user.get_items() == []


async def test_items_round_trip_unchanged(make):
    """Non-ASCII text, reasoning items, function calls and their outputs, with ids and
    nested JSON: `get_items` gives back exactly what `add_items` took."""
    session = make("round_trip")
    items: list[Any] = [
        {"role": "user", "content": 'café, 東京, emoji 🚀, and "quotes"\n'},
        _make_reasoning_item("rs_1", "thinking about Ørsted"),
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "lookup",
            "arguments": json.dumps({"city": "Zürich", "n": 3}),
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": '{"temp": 21.5}'},
        _make_message_item("msg_1", "Zürich: 21.5 °C"),
        {"role": "user", "content": [{"type": "input_text", "text": "mixed parts"}], "n": 1.0},
    ]
    await session.add_items(items)
    assert await session.get_items() == items
    assert await session.get_items(limit=3) == items[-3:]
    assert await session.pop_item() == items[-1]


async def test_items_keep_their_order_across_calls(make):
    session = make("order")
    await session.add_items([_make_message_item("older", "old")])
    await session.add_items([_make_reasoning_item("rs", "..."), _make_message_item("msg", "...")])
    assert _item_ids(await session.get_items()) == ["older", "rs", "msg"]
    assert _item_ids(await session.get_items(limit=2)) == ["rs", "msg"]
    popped = await session.pop_item()
    assert popped is not None and cast(dict[str, Any], popped)["id"] == "msg"
    assert _item_ids(await session.get_items()) == ["older", "rs"]


async def test_concurrent_pops_return_each_item_once(make, store: EventStore):
    """Eight sessions objects on one history pop twelve items concurrently (and more
    than there are): each item comes back once, and the rest get None."""
    first = make("many_pops")
    await first.add_items([{"role": "user", "content": f"item {i}"} for i in range(12)])
    sessions = [
        SessionRecallSession(first.session_id, user_id=first.user_id, store=store) for _ in range(8)
    ]
    popped = await asyncio.wait_for(
        asyncio.gather(*(sessions[i % 8].pop_item() for i in range(16))), timeout=120
    )
    contents = [cast(dict[str, Any], item)["content"] for item in popped if item is not None]
    assert sorted(contents) == sorted(f"item {i}" for i in range(12))
    assert await first.get_items() == []


async def test_clear_erases_the_session_and_later_items_are_kept(make, store: EventStore):
    session = make("clear_then_add")
    neighbour = SessionRecallSession(
        f"{session.session_id}-x", user_id=session.user_id, store=store
    )
    await session.add_items([{"role": "user", "content": "before"}])
    await neighbour.add_items([{"role": "user", "content": "next door"}])
    await session.clear_session()
    assert await session.get_items() == []
    await session.add_items([{"role": "user", "content": "after"}])
    assert [i.get("content") for i in await session.get_items()] == ["after"]
    assert [i.get("content") for i in await neighbour.get_items()] == ["next door"]


async def test_events_of_other_surfaces_read_as_messages_and_other_kinds_are_skipped(
    make, store: EventStore, es: Elasticsearch
):
    """An event stored by `ingest` or `serve` has no payload: a message comes back as a
    message of its role; a tool call stored that way is no SDK item, and is left out
    (and left alone by `pop_item`)."""
    session = make("mixed")
    stamp = "2026-01-02T03:04:05Z"
    written = Writer(es, store.alias).write(
        Submission(Event.model_validate(e))
        for e in (
            {"user_id": session.user_id, "session_id": session.session_id, "timestamp": stamp,
             "type": "user_message", "text": "from ingest", "event_id": "e1"},
            {"user_id": session.user_id, "session_id": session.session_id, "timestamp": stamp,
             "type": "tool_call", "text": "search(x)", "event_id": "e2"},
        )
    )  # fmt: skip
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=store.alias)
    assert await session.get_items() == [{"role": "user", "content": "from ingest"}]
    assert await session.pop_item() == {"role": "user", "content": "from ingest"}
    assert await session.pop_item() is None


# --- one store, two uses: history and memory_search --------------------------------------


async def test_one_store_two_uses_a_later_session_recalls_through_memory_search(
    make, store: EventStore
):
    """Two `Runner` sessions of one user: in the second, the model calls
    `memory_search` and gets the first session's fact. Another user's session holding
    the same words never appears."""
    from agents.testing import function_call

    from session_recall.integrations.openai_agents import memory_search_tool

    user = f"u-{uuid.uuid4().hex[:6]}"
    first = make("trip-planning", user_id=user)
    stranger = make("trip-planning", user_id=f"{user}-other")
    model = ScriptedModel()
    agent = Agent(name="helper", model=model, tools=[memory_search_tool(first.memory())])

    model.enqueue([get_text_message("Noted: the offsite is in Lisbon, at the Alfama venue.")])
    await Runner.run(agent, "Book the offsite at the Alfama venue in Lisbon.", session=first)
    model.enqueue([get_text_message("Noted: the offsite is in Porto, at the Ribeira venue.")])
    await Runner.run(
        Agent(name="other", model=model), "Book the offsite at the Ribeira venue.", session=stranger
    )

    second = make("later", user_id=user)
    model.enqueue(
        [
            function_call(
                "memory_search",
                {"innerThought": "The venue was booked earlier.", "query": "offsite venue"},
                call_id="c1",
            )
        ]
    )
    model.enqueue([get_text_message("It is at the Alfama venue in Lisbon.")])
    result = await Runner.run(agent, "Where did we book the offsite?", session=second)

    assert result.final_output == "It is at the Alfama venue in Lisbon."
    [output] = [
        item for item in model.calls[-1].input if item.get("type") == "function_call_output"
    ]
    hits = json.loads(output["output"])
    assert any("Alfama" in hit["text"] for hit in hits)
    # This user's sessions only: the first, and the question just asked in this one.
    assert first.session_id in {hit["sessionId"] for hit in hits}
    assert {hit["sessionId"] for hit in hits} <= {first.session_id, second.session_id}
    assert "Ribeira" not in output["output"] and "Porto" not in output["output"]
    # The second session's history has the tool call and its output, as items.
    kinds = [item.get("type") for item in await second.get_items()]
    assert "function_call" in kinds and "function_call_output" in kinds


async def test_the_memory_tool_offers_no_scope_and_answers_bad_arguments_with_a_line(make):
    from session_recall.integrations.openai_agents import memory_search_tool

    tool = memory_search_tool(make("tool", user_id="u-tool").memory())
    properties = tool.params_json_schema["properties"]
    assert "query" in properties
    assert not {"user_id", "userId", "user", "session_id", "sessionId"} & set(properties)
    for bad in ("not json", "[1, 2]", '{"query": ""}', '{"query": "x", "limit": "many"}'):
        answer = await tool.on_invoke_tool(None, bad)  # type: ignore[arg-type]
        assert isinstance(answer, str) and "Traceback" not in answer and answer.strip()


async def test_bad_ids_items_and_a_node_that_does_not_answer_say_what_to_do(make):
    from session_recall.core.errors import ConfigurationError, ElasticsearchUnavailable
    from session_recall.recall import InvalidScope

    for session_id, user_id in (("", "u"), ("s", " ")):
        with pytest.raises(InvalidScope):
            SessionRecallSession(session_id, user_id=user_id)
    with pytest.raises(ConfigurationError, match="not a usable index alias"):
        SessionRecallSession("s", user_id="u", index="_all,*")  # never a pattern
    with pytest.raises(TypeError, match="JSON object"):
        await make("bad_item").add_items(["not an item"])  # type: ignore[list-item]
    nowhere = SessionRecallSession(
        "s", user_id="u", settings=Settings(ELASTICSEARCH_URL="http://127.0.0.1:9"), timeout=2
    )
    for call in (nowhere.get_items, nowhere.pop_item):
        with pytest.raises(ElasticsearchUnavailable, match="ELASTICSEARCH_URL"):
            await call()


# --- all or nothing, pops that lose nothing, clocks that differ -------------------------


def _sharing(session: SessionRecallSession, store: EventStore) -> SessionRecallSession:
    """The same session of the same user, through another store."""
    return SessionRecallSession(session.session_id, user_id=session.user_id, store=store)


def _seamed(store: EventStore, hooks: dict[str, Any], timeout: float | None = None) -> EventStore:
    """A store on the same alias whose client passes through `hooks` (`Seam`)."""
    seam: Any = Seam(store.client, hooks)
    return EventStore(
        store.settings, index=store.alias, timeout=timeout or store.timeout, client=seam
    )


CALL: TResponseInputItem = cast(
    TResponseInputItem,
    {"type": "function_call", "call_id": "c1", "name": "fetch", "arguments": "{}"},
)


def _output(text: str) -> TResponseInputItem:
    return cast(
        TResponseInputItem, {"type": "function_call_output", "call_id": "c1", "output": text}
    )


async def test_a_refused_item_stores_none_of_the_call_and_a_retry_stores_each_once(make):
    """A tool output over the 5 MiB event limit: the call is not kept without it."""
    session = make("all_or_nothing")
    huge = _output("x" * (6 * 1024 * 1024))
    with pytest.raises(IndexerError, match=r"1 of 2 event\(s\) were refused \(#2: event is"):
        await session.add_items([CALL, huge])
    assert await session.get_items() == []
    await session.add_items([CALL, _output("the page")])
    assert await session.get_items() == [CALL, _output("the page")]


async def test_a_write_that_fails_midway_is_taken_back_so_a_retry_stores_each_once(
    make, store: EventStore
):
    """The node takes the events but its answers never come back (a client seam):
    what landed is deleted again, so the caller's retry stores nothing twice."""

    def lost_answer(bulk: Any, *, operations: bytes, **params: Any) -> Any:
        answer = bulk(operations=operations, **params)
        if b'"create"' in operations:
            raise ConnectionFailed("the answer was lost")  # stored, never acknowledged
        return answer

    session = make("failed_midway")
    flaky = _sharing(session, _seamed(store, {"bulk": lost_answer}, timeout=2.0))
    with pytest.raises(SessionRecallError):
        await flaky.add_items([CALL, _output("the page")])
    assert await session.get_items() == []
    await session.add_items([CALL, _output("the page")])
    assert await session.get_items() == [CALL, _output("the page")]


async def test_an_item_json_cannot_hold_is_refused_by_name_and_nothing_is_stored(make):
    session = make("nan")
    scored = cast(TResponseInputItem, {"role": "user", "content": "hi", "score": float("nan")})
    with pytest.raises(InvalidEvent, match=r"Item 2 of 2 cannot be stored: payload.score is nan"):
        await session.add_items([{"role": "user", "content": "fine"}, scored])
    assert await session.get_items() == []


async def test_a_failed_refresh_after_a_pop_still_returns_the_item(make, store: EventStore):
    def refresh_fails(_refresh: Any, **_params: Any) -> Any:
        raise ConnectionFailed("the node went away")

    session = make("pop_refresh")
    one, two = {"role": "user", "content": "one"}, {"role": "user", "content": "two"}
    await session.add_items([one, two])  # type: ignore[list-item]
    popping = _sharing(session, _seamed(store, {"indices.refresh": refresh_fails}))
    assert await popping.pop_item() == two
    assert await session.get_items() == [one]


async def _until(read: Any, expected: Any, *, within: float = 30.0) -> Any:
    """`await read()` until it returns `expected`, or its last answer at the deadline."""
    deadline = time.monotonic() + within
    while True:
        answer = await read()
        if answer == expected or time.monotonic() > deadline:
            return answer
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("held", ["search", "delete"])
async def test_a_cancelled_pop_leaves_the_item_in_the_session(make, store: EventStore, held):
    """A pop's caller is cancelled (`asyncio.wait_for` does this) while its worker
    thread waits on Elasticsearch: before the delete (`search` held), the pop stops
    there; with the delete in flight (`delete` held), the item is put back once the
    delete is done. Nobody received it, so it is still the session's latest item."""
    entered, release, cancelled = threading.Event(), threading.Event(), threading.Event()
    calls: list[str] = []

    def hold(method: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(held)
        entered.set()
        release.wait(60)
        return method(*args, **kwargs)

    def record_delete(delete: Any, **kwargs: Any) -> Any:
        calls.append("delete")
        return delete(**kwargs)

    hooks = {held: hold} if held == "delete" else {"search": hold, "delete": record_delete}
    session = make(f"pop_cancelled_{held}")
    items = [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]
    await session.add_items(items)  # type: ignore[arg-type]
    popping = _sharing(session, _seamed(store, hooks))

    async def cancel_a_pop() -> None:
        pop = asyncio.ensure_future(popping.pop_item())
        await asyncio.to_thread(entered.wait, 60)
        pop.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pop
        assert pop.cancelled()
        cancelled.set()

    # The pop runs on an event loop of its own: `asyncio.run` returns once that loop's
    # worker threads are done, the pop's among them, so what it did is done by then.
    loop = threading.Thread(target=asyncio.run, args=(cancel_a_pop(),))
    loop.start()
    assert await asyncio.to_thread(cancelled.wait, 60)
    release.set()
    await asyncio.to_thread(loop.join, 60)
    assert not loop.is_alive()
    if held == "search":
        assert "delete" not in calls
        assert await session.get_items() == items
    else:  # deleted, then put back by a thread of its own
        assert await _until(session.get_items, items, within=10) == items


async def test_items_added_right_after_a_clear_on_a_host_whose_clock_runs_ahead_are_kept(
    make, store: EventStore
):
    """Another host cleared the session, its clock 5 s ahead of ours: its tombstone
    covers up to its own now. Items added here right after are stamped past it, and
    kept, rather than refused as erased without a word."""
    session = make("clock_ahead")
    await session.add_items([{"role": "user", "content": "before"}])  # type: ignore[list-item]
    ahead = Instant(time.time_ns() + 5_000_000_000)
    erase(store.client, store.alias, Scope.session(session.user_id, session.session_id), at=ahead)
    await session.add_items([{"role": "user", "content": "after"}])  # type: ignore[list-item]
    assert [item.get("content") for item in await session.get_items()] == ["after"]
