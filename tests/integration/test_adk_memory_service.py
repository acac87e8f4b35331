"""Google ADK's own tests of its memory service, run against ours on a real node.

Ported from adk-python's `tests/unittests/memory/test_in_memory_memory_service.py`
at commit 2049ee68b54ba8b3bc562bbfdc489a1190c852f6 (the newest copy reachable here;
its 42 cases pass against google-adk 2.13.0, the version we pin, whose release tag is
not reachable). The tests are ADK's, with `InMemoryMemoryService()` replaced by our
service on an alias of the test's own; the searches run in keyword mode, which is
ADK's own contract (a semantic search always returns the nearest memories, so
"no match" would not hold there), and without the background enrichment: a memory's
context holds the words of the turns before it, so "Python" would also find the turn
that answered it, where ADK's contract counts the memories that say it themselves.

Left out, each for a reason of its own:
- `test_add_session_to_memory`, `test_add_events_to_memory_with_explicit_events`,
  `..._without_session_id_uses_default_bucket`, `..._alias_is_supported`,
  `..._appends_without_replacing`, `..._deduplicates_event_ids` and
  `test_add_session_with_no_events_to_memory` read the in-memory service's private
  state (`_session_events`). What they check through it (events without content
  skipped, a delta appended, an id stored once) is checked through search below.
- `test_search_memory_ranks_by_number_of_matching_words` and
  `test_search_memory_returns_at_most_ten_memories` assert the in-memory service's
  word-count ranking and its cap of ten in insertion order; ours ranks by BM25.
"""

import asyncio
import threading
import unicodedata
from collections.abc import Iterator

import pytest
from google.adk.events.event import Event
from google.adk.platform import thread as platform_thread
from google.adk.sessions.session import Session
from google.genai import types

from session_recall.config import Settings
from session_recall.integrations.adk import SessionRecallMemoryService

pytestmark = pytest.mark.integration

MOCK_APP_NAME = "test-app"
MOCK_USER_ID = "test-user"
MOCK_OTHER_USER_ID = "another-user"

MOCK_SESSION_1 = Session(
    app_name=MOCK_APP_NAME,
    user_id=MOCK_USER_ID,
    id="session-1",
    last_update_time=1000,
    events=[
        Event(
            id="event-1a",
            invocation_id="inv-1",
            author="user",
            timestamp=12345,
            content=types.Content(parts=[types.Part(text="The ADK is a great toolkit.")]),
        ),
        # Event with no content, should be ignored by the service
        Event(id="event-1b", invocation_id="inv-2", author="user", timestamp=12346),
        Event(
            id="event-1c",
            invocation_id="inv-3",
            author="model",
            timestamp=12347,
            content=types.Content(
                parts=[types.Part(text="I agree. The Agent Development Kit (ADK) rocks!")]
            ),
        ),
    ],
)

MOCK_SESSION_2 = Session(
    app_name=MOCK_APP_NAME,
    user_id=MOCK_USER_ID,
    id="session-2",
    last_update_time=2000,
    events=[
        Event(
            id="event-2a",
            invocation_id="inv-4",
            author="user",
            timestamp=54321,
            content=types.Content(parts=[types.Part(text="I like to code in Python.")]),
        ),
    ],
)

MOCK_SESSION_DIFFERENT_USER = Session(
    app_name=MOCK_APP_NAME,
    user_id=MOCK_OTHER_USER_ID,
    id="session-3",
    last_update_time=3000,
    events=[
        Event(
            id="event-3a",
            invocation_id="inv-5",
            author="user",
            timestamp=60000,
            content=types.Content(parts=[types.Part(text="This is a secret.")]),
        ),
    ],
)


@pytest.fixture
def memory_service(settings: Settings) -> Iterator[SessionRecallMemoryService]:
    """A service on an alias of the test's own: ADK's tests each start empty."""
    yield SessionRecallMemoryService(
        settings=settings.model_copy(update={"embedder": "none", "enrich": False}),
        mode="keyword",
    )


async def test_search_memory_simple_match(memory_service):
    """Tests a simple keyword search that should find a match."""
    await memory_service.add_session_to_memory(MOCK_SESSION_1)
    await memory_service.add_session_to_memory(MOCK_SESSION_2)

    result = await memory_service.search_memory(
        app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, query="Python"
    )

    assert len(result.memories) == 1
    assert result.memories[0].content.parts[0].text == "I like to code in Python."
    assert result.memories[0].author == "user"


async def test_search_memory_case_insensitive_match(memory_service):
    """Tests that search is case-insensitive."""
    await memory_service.add_session_to_memory(MOCK_SESSION_1)

    result = await memory_service.search_memory(
        app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, query="development"
    )

    assert len(result.memories) == 1
    assert (
        result.memories[0].content.parts[0].text
        == "I agree. The Agent Development Kit (ADK) rocks!"
    )


async def test_search_memory_multiple_matches(memory_service):
    """Tests that a query can match multiple events."""
    await memory_service.add_session_to_memory(MOCK_SESSION_1)

    result = await memory_service.search_memory(
        app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, query="How about ADK?"
    )

    assert len(result.memories) == 2
    texts = {memory.content.parts[0].text for memory in result.memories}
    assert "The ADK is a great toolkit." in texts
    assert "I agree. The Agent Development Kit (ADK) rocks!" in texts


async def test_search_memory_no_match(memory_service):
    """Tests a search query that should not match any memories."""
    await memory_service.add_session_to_memory(MOCK_SESSION_1)

    result = await memory_service.search_memory(
        app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, query="nonexistent"
    )

    assert not result.memories


async def test_search_memory_is_scoped_by_user(memory_service):
    """Tests that search results are correctly scoped to the user_id."""
    await memory_service.add_session_to_memory(MOCK_SESSION_1)
    await memory_service.add_session_to_memory(MOCK_SESSION_DIFFERENT_USER)

    result = await memory_service.search_memory(
        app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, query="secret"
    )
    assert not result.memories

    result_other_user = await memory_service.search_memory(
        app_name=MOCK_APP_NAME, user_id=MOCK_OTHER_USER_ID, query="secret"
    )
    assert len(result_other_user.memories) == 1
    assert result_other_user.memories[0].content.parts[0].text == "This is a secret."


async def test_search_memory_does_not_collide_on_slash_in_identifiers(memory_service):
    """Tests that a slash in app_name cannot alias another app/user pair."""
    await memory_service.add_session_to_memory(
        Session(
            app_name="app/other-user",
            user_id="user",
            id="session-slashed-app",
            last_update_time=1000,
            events=[
                Event(
                    id="event-slashed-app",
                    invocation_id="inv-slashed-app",
                    author="user",
                    timestamp=12345,
                    content=types.Content(parts=[types.Part(text="This is a secret.")]),
                ),
            ],
        )
    )

    result = await memory_service.search_memory(
        app_name="app", user_id="other-user/user", query="secret"
    )

    assert not result.memories


NFD = "NFD"


@pytest.mark.parametrize(
    ("event_text", "query", "expected_count"),
    [
        # Japanese (no space delimiters — substring fallback)
        ("私の名前は太郎です", "太郎", 1),
        ("私の名前は太郎です", "天気", 0),
        # Chinese (no space delimiters — substring fallback)
        ("我喜欢机器学习", "机器学习", 1),
        ("我喜欢机器学习", "天气预报", 0),
        # Korean (space-delimited — token match)
        ("제 이름은 민수입니다", "민수입니다", 1),
        # Cyrillic (space-delimited — token match)
        ("Меня зовут Алексей", "Алексей", 1),
        # Mixed: non-Latin substring + Latin token in same event
        ("太郎 works at ABC Corp", "太郎", 1),
        ("太郎 works at ABC Corp", "ABC", 1),
        # Latin word inside an unspaced script (no space to tokenize on)
        ("私はPythonでADKを使っています", "Python", 1),
        ("私はPythonでADKを使っています", "adk", 1),
        ("我用Python写代码", "python", 1),
        ("私はPythonでADKを使っています", "使って", 1),
        ("私はPythonでADKを使っています", "Java", 0),
        # Latin partial-word must NOT match (regression guard)
        ("I like to code in Python.", "thon", 0),
        ("私はPythonでADKを使っています", "thon", 0),
        # Decomposed (NFD) text: NFC normalization ensures match
        (unicodedata.normalize(NFD, "私はCaféでADKを使っています"), "Café", 1),
        (unicodedata.normalize(NFD, "私はCaféでADKを使っています"), "café", 1),
        (unicodedata.normalize(NFD, "私はCaféでADKを使っています"), "Ruby", 0),
        (unicodedata.normalize(NFD, "Meet at the Café"), "Café", 1),
        ("Meet at the Café", unicodedata.normalize(NFD, "Café"), 1),
        (unicodedata.normalize(NFD, "プログラミングを学ぶ"), "プログラミング", 1),
        (unicodedata.normalize(NFD, "제 이름은 민수입니다"), "민수입니다", 1),
    ],
)
async def test_search_memory_non_latin(memory_service, event_text, query, expected_count):
    """Tests search_memory with non-Latin scripts and mixed content."""
    session = Session(
        app_name=MOCK_APP_NAME,
        user_id=MOCK_USER_ID,
        id="session-i18n",
        last_update_time=7000,
        events=[
            Event(
                id="event-i18n",
                invocation_id="inv-i18n",
                author="user",
                timestamp=90000,
                content=types.Content(parts=[types.Part(text=event_text)]),
            ),
        ],
    )
    await memory_service.add_session_to_memory(session)

    result = await memory_service.search_memory(
        app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, query=query
    )
    assert len(result.memories) == expected_count


def _make_event(tag: str) -> Event:
    return Event(
        id=f"event-{tag}",
        invocation_id=f"inv-{tag}",
        author="user",
        timestamp=1.0,
        content=types.Content(parts=[types.Part(text=f"fact about {tag}")]),
    )


def _make_session(tag: str) -> Session:
    return Session(
        app_name=MOCK_APP_NAME,
        user_id=MOCK_USER_ID,
        id=f"session-{tag}",
        last_update_time=1,
        events=[_make_event(tag)],
    )


# ADK runs 500 iterations per thread against a dict; against a node, 25 per thread
# (each a real write or search) keep the same three threads racing.
ITERATIONS = 25


def test_search_memory_is_thread_safe_against_concurrent_writes(memory_service):
    """Searching while other threads add memory must not crash."""
    seed_loop = asyncio.new_event_loop()
    try:
        for i in range(50):
            seed_loop.run_until_complete(
                memory_service.add_session_to_memory(_make_session(f"seed-{i}"))
            )
    finally:
        seed_loop.close()

    errors = []
    stop = threading.Event()
    barrier = threading.Barrier(3)

    def writer():
        loop = asyncio.new_event_loop()
        barrier.wait()
        try:
            for i in range(ITERATIONS):
                if stop.is_set():
                    return
                loop.run_until_complete(
                    memory_service.add_session_to_memory(_make_session(f"writer-{i}"))
                )
        except Exception as e:
            errors.append(e)
            stop.set()
        finally:
            loop.close()

    def reader():
        loop = asyncio.new_event_loop()
        barrier.wait()
        try:
            for _ in range(ITERATIONS):
                if stop.is_set():
                    return
                loop.run_until_complete(
                    memory_service.search_memory(
                        app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, query="fact"
                    )
                )
        except Exception as e:
            errors.append(e)
            stop.set()
        finally:
            loop.close()

    threads = [
        platform_thread.create_thread(writer),
        platform_thread.create_thread(reader),
        platform_thread.create_thread(reader),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not errors, f"search_memory raced with concurrent writes: {errors[0]!r}"


@pytest.mark.parametrize("ingest_session", [True, False])
async def test_ingested_memories_do_not_follow_caller_event_mutations(
    memory_service, ingest_session: bool
) -> None:
    """Changing an ingested event does not rewrite the stored memory."""
    event = Event(
        id="event",
        author="user",
        timestamp=12345,
        content=types.Content(parts=[types.Part(text="I prefer jasmine tea.")]),
    )
    session = Session(app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, id="session", events=[event])
    if ingest_session:
        await memory_service.add_session_to_memory(session)
    else:
        await memory_service.add_events_to_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.id,
            events=session.events,
        )

    event.author = "changed"
    event.content.parts[0].text = "I prefer coffee."
    result = await memory_service.search_memory(
        app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, query="jasmine"
    )

    assert len(result.memories) == 1
    assert result.memories[0].author == "user"
    assert result.memories[0].content.parts[0].text == "I prefer jasmine tea."


@pytest.mark.parametrize("ingest_session", [True, False])
async def test_retrieved_memories_do_not_mutate_storage_or_session_history(
    memory_service, ingest_session: bool
) -> None:
    """Editing a search result leaves subsequent recall and its source intact."""
    session = Session(
        app_name=MOCK_APP_NAME,
        user_id=MOCK_USER_ID,
        id="session",
        events=[
            Event(
                id="event",
                author="user",
                timestamp=12345,
                content=types.Content(parts=[types.Part(text="I prefer jasmine tea.")]),
            ),
        ],
    )
    if ingest_session:
        await memory_service.add_session_to_memory(session)
    else:
        await memory_service.add_events_to_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.id,
            events=session.events,
        )
    first_result = await memory_service.search_memory(
        app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, query="jasmine"
    )

    first_result.memories[0].content.parts.clear()
    second_result = await memory_service.search_memory(
        app_name=MOCK_APP_NAME, user_id=MOCK_USER_ID, query="jasmine"
    )

    assert len(second_result.memories) == 1
    assert second_result.memories[0].content.parts[0].text == "I prefer jasmine tea."
    assert session.events[0].content.parts[0].text == "I prefer jasmine tea."
