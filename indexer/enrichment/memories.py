"""Writing kept memories: `save_memory` and `retire_memory`, bound to one user.

A memory (`core.kept_memories.Memory`) lives in the alias's memories index, routed by
its user. Its sources are checked before anything is written: each must be an event
of the same user, stored and searchable; an unknown id and another user's are refused
alike (saying which would tell one user that another's event exists). The memory's id
is a digest of its user, kind, statement and sources, written with `create`: saved
twice, it is stored once.

Superseding sets the older memory's `valid_to` (the newer one's `valid_from`) and
`superseded_by`, with a conditional write; the older one is kept as history. Erasure
removes every memory with an erased source (`memory_erasure`).

    writer = MemoryWriter(client, "session-events", user_id="alice", embedder=embedder)
    saved = writer.save_memory("Billing uses MySQL.", "decision", ["e-42"])
    writer.retire_memory(saved.memory.memory_id, "the billing service was retired")
"""

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from elasticsearch import (
    ApiError,
    ConflictError,
    Elasticsearch,
    NotFoundError,
    TransportError,
)
from pydantic import BaseModel

from session_recall.core.access import role_hint
from session_recall.core.errors import ElasticsearchUnavailable, ErrorKind
from session_recall.core.index_names import memory_index
from session_recall.core.instant import Instant
from session_recall.core.kept_memories import (
    AGENT_ORIGIN,
    MAX_REASON_CHARS,
    MAX_SOURCES,
    MAX_STATEMENT_CHARS,
    MAX_SUBJECT_CHARS,
    MEMORY_KINDS,
    Memory,
    memory_id,
)
from session_recall.core.limits import MAX_ID_CHARS
from session_recall.core.stems import stems
from session_recall.core.user_filter import user_filter
from session_recall.embeddings import MODELS_FIELD, VECTORS_FIELD, Embedder, vector_key
from session_recall.indexer.errors import IndexerError, PrivilegeMissing, refusal_reason

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")


class MemoryRefused(IndexerError):
    """A memory that cannot be saved or changed as asked: the caller changes the call."""

    kind = ErrorKind.CALLER


class MemoriesMissing(IndexerError):
    """The alias has no memories index (set up by an earlier release): run `setup`."""


class MemoryNotFound(MemoryRefused):
    """No memory of this user has that id."""


class SavedMemory(BaseModel):
    """What `save_memory` did: the memory, whether it was new (False: the same one was
    saved before), and the ids of the memories it superseded."""

    memory: Memory
    created: bool
    superseded: list[str] = []


def _engine_errors(func: Callable[P, T]) -> Callable[P, T]:
    """Elasticsearch's failures as the project's errors, each with its next step."""

    @functools.wraps(func)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return func(*args, **kwargs)
        except ApiError as err:
            message = f"Elasticsearch refused to keep the memory: {refusal_reason(err)}."
            if err.status_code == 403:
                raise PrivilegeMissing(message, hint=role_hint("enrich")) from None
            if err.status_code == 404:
                raise IndexerError(
                    "The alias has no memories index yet.",
                    hint="Run `session-recall setup` once; it makes it.",
                ) from None
            if err.status_code in (429, 502, 503, 504):
                raise ElasticsearchUnavailable(message, hint="Try again in a moment.") from None
            raise IndexerError(message, hint="Check the alias and the credentials.") from None
        except TransportError as err:
            raise ElasticsearchUnavailable(
                f"Elasticsearch did not answer: {type(err).__name__}.",
                hint="Check ELASTICSEARCH_URL and that the node runs, then try again.",
            ) from None

    return wrapped


@dataclass(frozen=True)
class SourceEvent:
    """A stored event a memory comes from: its id, document `_id` and instant."""

    event_id: str
    doc_id: str
    timestamp: Instant


def _text(name: str, value: object, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise MemoryRefused(
            f"The memory's {name} must be a non-empty string.",
            hint=f"Pass the {name} as a short, standalone sentence.",
        )
    if len(value) > limit:
        raise MemoryRefused(
            f"The memory's {name} is {len(value)} characters long; the limit is {limit}.",
            hint=f"Shorten the {name}: a memory is a short, standalone statement.",
        )
    return value.strip()


class MemoryWriter:
    """Saves and retires the memories of the one user it is built for."""

    def __init__(
        self,
        client: Elasticsearch,
        alias: str,
        *,
        user_id: str,
        embedder: Embedder | None = None,
        origin: str = AGENT_ORIGIN,
        contact_id: str | None = None,
        inbox_id: str | None = None,
    ) -> None:
        if not isinstance(user_id, str) or not user_id.strip() or len(user_id) > MAX_ID_CHARS:
            raise MemoryRefused(
                f"user_id must be a non-empty string of at most {MAX_ID_CHARS} characters.",
                hint="Pass the user_id the events were stored with.",
            )
        self._client = client
        self._alias = alias
        self._index = memory_index(alias)
        self.user_id = user_id
        self._embedder = embedder
        self._origin = origin
        self._contact_id = contact_id
        self._inbox_id = inbox_id
        self._index_seen = False

    @_engine_errors
    def save_memory(
        self,
        statement: str,
        kind: str,
        sources: Sequence[str],
        supersedes: str | Sequence[str] | None = None,
        subject: str | None = None,
    ) -> SavedMemory:
        """Save a memory of this user, searchable on return.

        `kind`: decision, correction, instruction, preference or fact. `sources`: the
        event ids it came from (at least one), each an event of this user. `supersedes`:
        the memory id(s) it replaces, which stay as history with `supersededBy` set.
        `subject`: what it is about (optional), for superseding."""
        wanted = self._source_ids(sources)
        return self.save_resolved(
            statement, kind, self.resolve_sources(wanted), supersedes=supersedes, subject=subject
        )

    @_engine_errors
    def retire_memory(self, memory_id: str, reason: str) -> Memory:
        """Retire a current memory of this user: it stays as history, with `validTo`
        set to now and `reason` kept beside it."""
        why = _text("reason", reason, MAX_REASON_CHARS)
        found = self._get(memory_id)
        doc = {"valid_to": Instant.now().to_elasticsearch(), "retired": why}
        self._update(found, doc)
        self._client.indices.refresh(index=self._index)
        return Memory.from_source({**found["_source"], **doc})

    @_engine_errors
    def resolve_sources(self, event_ids: Sequence[str]) -> list[SourceEvent]:
        """The stored events of this user with those ids (every copy of each), or
        `MemoryRefused` naming the ids that are not this user's events."""
        query = {
            "bool": {
                "filter": [
                    *user_filter(self.user_id),
                    {"terms": {"event_id": list(event_ids)}},
                ]
            }
        }
        try:
            hits = self._client.search(
                index=self._alias,
                routing=self.user_id,
                query=query,
                size=MAX_SOURCES * 4,
                source_includes=["event_id", "timestamp"],
                track_total_hits=False,
            ).body["hits"]["hits"]
        except NotFoundError:
            hits = []
        found = [
            SourceEvent(
                str(hit["_source"]["event_id"]),
                str(hit["_id"]),
                Instant.parse(str(hit["_source"]["timestamp"])),
            )
            for hit in hits
        ]
        missing = sorted(set(event_ids) - {source.event_id for source in found})
        if missing:
            shown = ", ".join(repr(m) for m in missing[:3]) + (", ..." if len(missing) > 3 else "")
            raise MemoryRefused(
                f"{len(missing)} source(s) are not stored events of this user: {shown}.",
                hint="Pass the event_id of this user's own events, as cross_session_search "
                "shows them (an event just stored is searchable within a second).",
            )
        return found

    @_engine_errors
    def save_resolved(
        self,
        statement: str,
        kind: str,
        sources: Sequence[SourceEvent],
        *,
        supersedes: str | Sequence[str] | None = None,
        subject: str | None = None,
    ) -> SavedMemory:
        """`save_memory` with its sources already found (the consolidator read them)."""
        text = _text("statement", statement, MAX_STATEMENT_CHARS)
        if kind not in MEMORY_KINDS:
            raise MemoryRefused(
                f"{kind!r} is not a kind of memory.",
                hint=f"Use one of: {', '.join(MEMORY_KINDS)}.",
            )
        about = None if subject is None else _text("subject", subject, MAX_SUBJECT_CHARS)
        if not sources:
            raise MemoryRefused(
                "A memory needs at least one source event.",
                hint="Pass the event ids of the turns it comes from.",
            )
        replaced = [supersedes] if isinstance(supersedes, str) else list(supersedes or [])
        old = [self._get(m) for m in dict.fromkeys(replaced)]  # checked before any write
        event_ids = sorted({s.event_id for s in sources})
        new_id = memory_id(self.user_id, kind, text, event_ids)
        valid_from = max(s.timestamp for s in sources)
        body: dict[str, Any] = {
            "memory_id": new_id,
            "user_id": self.user_id,
            "kind": kind,
            "statement": text,
            "stems": stems(text),
            "sources": event_ids,
            "source_ids": sorted({s.doc_id for s in sources}),
            "sources_since": min(s.timestamp for s in sources).to_elasticsearch(),
            "valid_from": valid_from.to_elasticsearch(),
            "origin": self._origin,
        }
        for field, value in (
            ("subject", about),
            ("contact_id", self._contact_id),
            ("inbox_id", self._inbox_id),
        ):
            if value is not None:
                body[field] = value
        body.update(self._vector(text))
        self._require_index()
        try:
            self._client.create(index=self._index, id=new_id, routing=self.user_id, document=body)
        except ConflictError:
            existing = self._get(new_id)
            return SavedMemory(memory=Memory.from_source(existing["_source"]), created=False)
        superseded = []
        for hit in old:
            if hit["_id"] == new_id or hit["_source"].get("valid_to"):
                continue  # history already (superseded or retired): it stays as it is
            change = {"valid_to": valid_from.to_elasticsearch(), "superseded_by": new_id}
            if self._update(hit, change, lenient=True):
                superseded.append(str(hit["_id"]))
        # One refresh for the new memory and what it superseded, before the erasure
        # check below: an erasure running now then finds the memory, or the check sees
        # its source gone.
        self._client.indices.refresh(index=self._index)
        self._unless_erased(new_id, body["source_ids"])
        return SavedMemory(memory=Memory.from_source(body), created=True, superseded=superseded)

    def _require_index(self) -> None:
        """A create would make a missing index on the fly, without the memories'
        mapping: an alias set up before memories existed is told to run `setup`."""
        if self._index_seen:
            return
        if not self._client.indices.exists(index=self._index):
            raise MemoriesMissing(
                f"{self._alias!r} has no memories index: it was set up by an earlier release.",
                hint="Run `session-recall setup` once; it makes it.",
            )
        self._index_seen = True

    def _source_ids(self, sources: Sequence[str]) -> list[str]:
        if isinstance(sources, str) or not isinstance(sources, Sequence):
            raise MemoryRefused(
                "sources must be a list of event ids.",
                hint='Pass the event ids of the turns it comes from, as ["e-1"].',
            )
        ids = list(dict.fromkeys(sources))
        if not ids:
            raise MemoryRefused(
                "A memory needs at least one source event.",
                hint="Pass the event ids of the turns it comes from.",
            )
        if len(ids) > MAX_SOURCES:
            raise MemoryRefused(
                f"A memory takes at most {MAX_SOURCES} sources; {len(ids)} were given.",
                hint="Name the few turns the statement rests on.",
            )
        for one in ids:
            if not isinstance(one, str) or not one.strip() or len(one) > MAX_ID_CHARS:
                raise MemoryRefused(
                    f"{one!r} is not an event id.",
                    hint="Pass the event_id of this user's own events.",
                )
        return ids

    def _vector(self, text: str) -> dict[str, Any]:
        """The statement's vector, when the embedder gives one; without it the memory
        is still found by its words."""
        if self._embedder is None:
            return {}
        try:
            [vector] = self._embedder.embed([text])
        except Exception as err:  # the embedder's failure must not lose the memory
            log.warning("a memory was saved without its vector: %s", err)
            return {}
        if vector is None:
            return {}
        key = vector_key(self._embedder.model_id)
        values = vector.tolist() if hasattr(vector, "tolist") else list(vector)
        return {VECTORS_FIELD: {key: values}, MODELS_FIELD: [self._embedder.model_id]}

    def _get(self, wanted: str) -> dict[str, Any]:
        if not isinstance(wanted, str) or not wanted or len(wanted) > MAX_ID_CHARS:
            raise MemoryNotFound(f"{wanted!r} is not a memory id.", hint=_LIST_THEM)
        try:
            found = self._client.get(
                index=self._index, id=wanted, routing=self.user_id, realtime=True
            ).body
        except NotFoundError:
            found = {}
        # Another user's memory on the same shard is no memory of this one's.
        if not found.get("found") or found["_source"].get("user_id") != self.user_id:
            raise MemoryNotFound(f"No memory of this user has the id {wanted!r}.", hint=_LIST_THEM)
        return found

    def _update(self, hit: dict[str, Any], doc: dict[str, Any], *, lenient: bool = False) -> bool:
        """`doc` into the memory `hit`, if nobody changed it since it was read."""
        try:
            self._client.update(
                index=self._index,
                id=hit["_id"],
                routing=self.user_id,
                doc=doc,
                if_seq_no=hit["_seq_no"],
                if_primary_term=hit["_primary_term"],
            )
        except (ConflictError, NotFoundError):
            if lenient:
                return False
            raise MemoryRefused(
                f"The memory {hit['_id']!r} changed (or went) meanwhile.",
                hint="List the memories again and retry with what is there now.",
            ) from None
        return True

    def _unless_erased(self, new_id: str, source_ids: list[str]) -> None:
        """An erasure of a source that ran between the check and the write has not seen
        this memory: when a source is gone now, the memory goes too, and is refused.
        (An erasure refreshes the events once they are deleted, then looks for the
        memories to remove: this memory is either found by it, or sees them gone.)"""
        query = {"ids": {"values": source_ids}}
        left = self._client.count(index=self._alias, routing=self.user_id, query=query)["count"]
        if int(left) == len(source_ids):
            return
        self._client.options(ignore_status=404).delete(
            index=self._index, id=new_id, routing=self.user_id, refresh=True
        )
        raise MemoryRefused(
            "A source of the memory was erased while it was saved; it was not kept.",
            hint="Save it again from events that are still stored, if it still holds.",
        )


_LIST_THEM = "List this user's memories (`session-recall memories list`) for their ids."

__all__ = [
    "MemoriesMissing",
    "MemoryNotFound",
    "MemoryRefused",
    "MemoryWriter",
    "SavedMemory",
    "SourceEvent",
]
