"""`SessionRecallMemoryService`: ADK's `BaseMemoryService`, all five methods of 2.13.

Every call runs off ADK's event loop (`asyncio.to_thread`) with a deadline of its own
(`timeout`): a slow or frozen node never stalls other coroutines, and a call fails
within the deadline with an error that names the next step.

- `add_session_to_memory` and `add_events_to_memory` store events through the
  indexer: idempotent (a session added twice stores nothing twice), and what was
  erased stays out. Events are searchable when the call returns.
- `add_memory` saves an entry that carries a kept memory's kind and sources (in
  `custom_metadata["kept_memory"]`, see `kept`) as a kept memory of the user, its
  sources checked; it stores every other `MemoryEntry` as an event of the session
  `adk-memories`; one without a timestamp keeps the instant of its first addition,
  so adding it again stores nothing twice, and one deleted by id stays out
  (`events.from_memory`). (Two
  processes that add the same new memory at the same moment may each find no copy,
  and store one each.)
- `search_memory` answers with the user's current kept memories that match the query
  first (`recall_memories`), then the turns `memory_search` finds, in the service's
  mode (by default the settings': hybrid with an embedder, keyword without one), the
  turns' texts bounded as every tool's answer is (`tools.bounds`).
- `delete_memory` erases the whole `(app_name, user_id)` scope, or one memory by its
  id, through the erasure path: tombstones keep replays out.
"""

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry

from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError
from session_recall.core.instant import Instant
from session_recall.indexer import Scope
from session_recall.integrations.adk.events import (
    MEMORIES_SESSION,
    from_adk_event,
    from_memory,
    to_memory_entry,
    untimed_id,
)
from session_recall.integrations.adk.kept import kept_request, to_kept_entry
from session_recall.integrations.adk.scope import memory_user
from session_recall.integrations.adk.uri import parse_uri
from session_recall.integrations.store import DEFAULT_TIMEOUT_S, EventStore
from session_recall.recall import DEFAULT_LIMIT, MAX_QUERY_CHARS, has_word, required
from session_recall.tools.bounds import OutputBounds, bounded_memory

if TYPE_CHECKING:
    from google.adk.events.event import Event as AdkEvent
    from google.adk.sessions.session import Session


UNKNOWN_SESSION = "__unknown_session_id__"  # ADK's bucket for events without a session


class SessionRecallMemoryService(BaseMemoryService):
    """ADK memory on session-recall. `settings` default to the environment's
    (`ELASTICSEARCH_URL`, credentials, `SESSION_RECALL_INDEX`...); `index` and
    `mode` override the alias and the search mode. `uri` and `agents_dir` are what
    ADK's service registry passes (see `registry`)."""

    def __init__(
        self,
        *,
        settings: Settings | None = None,
        index: str | None = None,
        mode: str | None = None,
        limit: int = DEFAULT_LIMIT,  # as ADK's own services: the memories a prompt can take
        context: int = 1,
        timeout: float = DEFAULT_TIMEOUT_S,
        uri: str | None = None,
        agents_dir: str | None = None,
    ) -> None:
        del agents_dir  # ADK passes it to every factory; memory lives in Elasticsearch
        if uri is not None:
            given = parse_uri(uri)
            index, mode = index or given.alias, mode or given.mode
        self._store = EventStore(settings, index=index, timeout=timeout)
        self.settings, self.alias = self._store.settings, self._store.alias
        self.mode = mode
        self.limit, self.context, self.timeout = limit, context, timeout

    async def add_session_to_memory(self, session: "Session") -> None:
        user = memory_user(session.app_name, session.user_id)
        events = [
            found
            for event in session.events
            if (found := from_adk_event(event, user_id=user, session_id=session.id))
        ]
        await asyncio.to_thread(self._store.store, events)

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence["AdkEvent"],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        user = memory_user(app_name, user_id)
        session = session_id or UNKNOWN_SESSION
        ours = [
            found
            for event in events
            if (
                found := from_adk_event(
                    event, user_id=user, session_id=session, custom_metadata=custom_metadata
                )
            )
        ]
        await asyncio.to_thread(self._store.store, ours)

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        user = memory_user(app_name, user_id)
        await asyncio.to_thread(self._add_memory, user, memories, custom_metadata)

    def _add_memory(
        self,
        user: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None,
    ) -> None:
        # Every entry is read before anything is written: a bad kept memory refuses
        # the call as a whole.
        kept = [(entry, kept_request(entry, custom_metadata)) for entry in memories]
        memories = [entry for entry, request in kept if request is None]
        requests = [request for _, request in kept if request is not None]
        if requests:
            writer = self._store.memory_writer(user)
            for request in requests:
                writer.save_memory(
                    request.statement,
                    request.kind,
                    request.sources,
                    supersedes=request.supersedes,
                    subject=request.subject,
                )
        if not memories:
            return
        untimed = {untimed_id(memory) for memory in memories if not memory.timestamp}
        at = self._store.instants_of(user, untimed, session_id=MEMORIES_SESSION)
        now = Instant.now()  # one instant for a new memory given twice in one call
        at.update({memory_id: now for memory_id in untimed - at.keys()})
        events = [
            found
            for memory in memories
            if (
                found := from_memory(
                    memory,
                    user_id=user,
                    custom_metadata=custom_metadata,
                    at=None if memory.timestamp else at[untimed_id(memory)],
                )
            )
        ]
        self._store.store(events)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        user = memory_user(app_name, user_id)
        if not query or not has_word(query):
            # As ADK's services: nothing asked, nothing found. PreloadMemoryTool asks
            # with the user's message as it is, which may be "?" alone.
            return SearchMemoryResponse()
        # PreloadMemoryTool asks with the user's whole message, which may run past
        # memory_search's limit: its start is searched rather than nothing.
        query = query[:MAX_QUERY_CHARS]
        kept, searcher = self._store.memories(user), self._store.memory(user)
        bounds = OutputBounds.of(self.settings)

        def search() -> list[MemoryEntry]:
            try:
                memories = kept.search(query, limit=self.limit).memories
            except ConfigurationError:  # a local model not installed: keywords, as below
                keywords = self._store.keyword_memories(user)
                memories = keywords.search(query, limit=self.limit).memories
            result = searcher.search(query, mode=self.mode, limit=self.limit, context=self.context)
            hits = bounded_memory(result, bounds).hits
            return [to_kept_entry(m) for m in memories] + [to_memory_entry(h) for h in hits]

        return SearchMemoryResponse(memories=await asyncio.to_thread(search))

    def close(self) -> None:
        """Stop this service's part of the background enrichment and close its client
        (an application's shutdown); the service is not used afterwards."""
        self._store.close()

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        user = memory_user(app_name, user_id)
        if memory_id is None:
            scope = Scope.user(user)
        else:  # `InvalidScope` for an empty id, as for every other bad argument
            scope = Scope.event(user, required("memory_id", memory_id))
        await asyncio.to_thread(self._store.erase, scope)
