"""Sessions as documents: one per session of a user, derived from its events.

A session document (`mappings/sessions.json`, in `<alias>-sessions`) holds its turns'
text and stems, so that memory_search can rank whole sessions by BM25 over everything
said in them (`recall.session_ranking`), with the session's time range and the `_id`s
of the turns it holds. It is routed by its user like the events, and bound to its
user in every query.

It is derived data, kept true to the events stored:
- the enrichment pass adds each page's turns to their sessions' documents, one read
  a page and their writes in the page's own bulk request (`page_writes`,
  `after_page`): a live flow does not rewrite a document at every turn, and no session
  is read again;
- every removal of events (an erasure of any scope, `pop_item`, ADK's
  `delete_memory`) rebuilds the documents that held one, once they are gone
  (`rebuild_holding`); a prune by time those that reach before its boundary
  (`rebuild_reaching_before`). A session with no turn left loses its document.

A write that read before a removal and wrote after it would hold erased words: each
notes the removals counter before it reads (`tombstones.removals_seen`), and while it
moved meanwhile, the documents are rebuilt from the events stored now (`rebuild`). A
removal refreshes the alias before it moves the counter, so the read after it no
longer sees what was removed.

An alias set up before session documents has none until `setup` adds their index and
writes the document of every session it holds (`rebuild_all`); the pass writes none
meanwhile, and memory_search ranks without the session step.
"""

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from elasticsearch import Elasticsearch, NotFoundError

from session_recall.core.digest import digest
from session_recall.core.index_names import session_index
from session_recall.core.instant import Instant
from session_recall.core.stems import stems
from session_recall.core.user_filter import user_filter
from session_recall.indexer import bulk, tombstones
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.enrichment.context_rule import STEMS_FIELD, Hit
from session_recall.indexer.enrichment.turns import read_sessions
from session_recall.indexer.errors import IndexerError
from session_recall.indexer.retry import RetryPolicy

# The turns a session's document holds: its last ones. BM25 over a longer session
# gains little, and its read and write stay bounded.
MAX_TURNS = 1_000
# A session's document holds at most this much text (the last turns' when longer).
MAX_TEXT_CHARS = 200_000
# Sessions rebuilt per `msearch` and bulk request.
_BATCH = 100
# Reads and writes again while removals move meanwhile: each time is another removal.
_ATTEMPTS = 5
_PAGE = 1_000

Session = tuple[str, str]  # (user_id, session_id)


@dataclass(frozen=True)
class Turn:
    """What a session document holds of one event: its `_id`, text, stems, instant."""

    id: str
    text: str
    stems: str
    timestamp: str


def document(user_id: str, session_id: str, turns: Sequence[Turn]) -> dict[str, Any]:
    """The document of a session from its turns (`Turn`s, oldest first): the last
    `MAX_TURNS` of them within `MAX_TEXT_CHARS`. Its arrays hold a value per turn, in
    the same order; BM25 reads them as one text."""
    kept: list[Turn] = []
    size = 0
    for turn in reversed(turns[-MAX_TURNS:]):
        if kept and size + len(turn.text) > MAX_TEXT_CHARS:
            break
        kept.append(turn)
        size += len(turn.text)
    kept.reverse()
    stamps = [turn.timestamp for turn in kept if turn.timestamp]  # "": held already
    return {
        "user_id": user_id,
        "session_id": session_id,
        "text": [turn.text[:MAX_TEXT_CHARS] for turn in kept],
        "stems": [turn.stems for turn in kept],
        "turns": len(kept),
        "event_ids": [turn.id for turn in kept],
        "since": min(stamps, key=_nanos) if stamps else None,
        "until": max(stamps, key=_nanos) if stamps else None,
    }


def extended(found: dict[str, Any] | None, user_id: str, session_id: str,
             turns: Sequence[Turn]) -> dict[str, Any]:  # fmt: skip
    """The document `found` (None: none yet) with `turns` added after the ones it
    holds (a turn it holds already is left as it is)."""
    if found is None:
        return document(user_id, session_id, turns)
    known = set(found["event_ids"])
    added = [turn for turn in turns if turn.id not in known]
    stamps = [s for s in (found["since"], found["until"], *(t.timestamp for t in added)) if s]
    ids = [*found["event_ids"], *(turn.id for turn in added)]
    texts = [*found["text"], *(turn.text for turn in added)]
    stemmed = [*found["stems"], *(turn.stems for turn in added)]
    if len(ids) > MAX_TURNS or sum(map(len, texts)) > MAX_TEXT_CHARS:  # the last ones
        held = [Turn(*values, "") for values in zip(ids, texts, stemmed, strict=True)]
        doc = document(user_id, session_id, held)
    else:
        doc = {"user_id": user_id, "session_id": session_id, "text": texts, "stems": stemmed,
               "turns": len(ids), "event_ids": ids}  # fmt: skip
    doc["since"] = min(stamps, key=_nanos) if stamps else None
    doc["until"] = max(stamps, key=_nanos) if stamps else None
    return doc


def turn_of(hit: Hit, stemmed: str | None = None) -> Turn:
    """A stored event as a session document takes it: its stems as given, else as
    stored, else made here."""
    source = hit["_source"]
    text = str(source.get("text") or "")
    if stemmed is None:
        stemmed = str(source.get(STEMS_FIELD) or stems(text))
    return Turn(str(hit["_id"]), text, stemmed, str(source["timestamp"]))


def _nanos(stamp: str) -> int:
    return Instant.parse(stamp).nanos


def document_id(user_id: str, session_id: str) -> str:
    return digest(["session", user_id, session_id])


def exists(client: Elasticsearch, alias: str) -> bool:
    return bool(client.indices.exists(index=session_index(alias)))


def rebuild(
    client: Elasticsearch,
    alias: str,
    sessions: Iterable[Session],
    *,
    policy: RetryPolicy | None = None,
    stats: BulkStats | None = None,
    refresh: bool = False,
) -> int:
    """Rebuild the document of each of `sessions` from the turns stored now (removed
    when none is left); how many documents were written or removed. Nothing when the
    alias has no session documents' index. `refresh`: searchable once it returns (an
    erasure's rebuild)."""
    wanted = sorted(set(sessions))
    if not wanted or not exists(client, alias):
        return 0
    policy, stats = policy or RetryPolicy(), stats or BulkStats()
    done = 0
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start : start + _BATCH]
        for _ in range(_ATTEMPTS):
            seen = tombstones.removals_seen(client, alias)
            done += _write(client, alias, batch, policy, stats, refresh=refresh)
            if tombstones.removals_seen(client, alias) == seen:
                break
        else:
            raise IndexerError(
                f"{len(batch)} session document(s) kept changing while being rebuilt.",
                hint="Run the same command again.",
            )
    return done


def _write(
    client: Elasticsearch,
    alias: str,
    batch: list[Session],
    policy: RetryPolicy,
    stats: BulkStats,
    *,
    refresh: bool,
) -> int:
    index = session_index(alias)
    turns = read_sessions(client, alias, batch, size=MAX_TURNS)
    actions: list[bulk.Action] = []
    for user, session in batch:
        target = {"_index": index, "_id": document_id(user, session), "routing": user}
        held = turns[(user, session)]
        if held:
            body = orjson.dumps(document(user, session, [turn_of(hit) for hit in held]))
            actions.append(({"index": target}, body))
        else:
            actions.append(({"delete": target}, None))
    params: dict[str, Any] = {"refresh": True} if refresh else {}
    responses = bulk.send(client, actions, policy=policy, stats=stats, **params)
    written = 0
    for response in responses:
        if 200 <= response.status < 300:
            written += 1
        elif response.status != 404:  # a delete of a document never written
            raise IndexerError(f"Writing a session document failed: {response.error}.")
    return written


@dataclass(frozen=True)
class PageWrites:
    """A page's writes of its sessions' documents, sent in the page's own bulk request
    (`actions`, one per session of `sessions`), conditional on the versions read."""

    sessions: list[Session]
    actions: list[bulk.Action]


def page_writes(
    client: Elasticsearch, alias: str, added: dict[Session, list[Turn]]
) -> PageWrites | None:
    """The documents of a page's sessions with its turns (`added`, by session) added,
    read in one `mget`; None when there are none to write (no session documents'
    index: an alias set up before them)."""
    if not added:
        return None
    index = session_index(alias)
    sessions = sorted(added)
    targets = [
        {"_index": index, "_id": document_id(user, session), "routing": user}
        for user, session in sessions
    ]
    try:
        found = client.mget(docs=targets, realtime=True).body["docs"]
    except NotFoundError:
        return None
    if any(_missing_index(doc) for doc in found):
        return None
    actions: list[bulk.Action] = []
    for (user, session), target, doc in zip(sessions, targets, found, strict=True):
        if doc.get("found"):
            version = {"if_seq_no": doc["_seq_no"], "if_primary_term": doc["_primary_term"]}
            header, current = {"index": {**target, **version}}, doc["_source"]
        else:
            header, current = {"create": target}, None
        body = extended(current, user, session, added[(user, session)])
        actions.append((header, orjson.dumps(body)))
    return PageWrites(sessions, actions)


def after_page(
    client: Elasticsearch,
    alias: str,
    writes: PageWrites,
    responses: Sequence[bulk.ItemResponse],
    *,
    seen: int,
    unsure: Collection[Session] = (),
    policy: RetryPolicy | None = None,
    stats: BulkStats | None = None,
) -> int:
    """Once a page's bulk request wrote `writes`: the documents that met another
    writer's version, those of `unsure` sessions (a turn of the page whose own update
    failed), and, when a removal was noted since the page was read (`seen`), all of
    them, are rebuilt from the events stored now (`rebuild`). How many were written."""
    again = set(unsure) & set(writes.sessions)
    written = 0
    for pair, response in zip(writes.sessions, responses, strict=True):
        if 200 <= response.status < 300:
            written += 1
        elif response.status == 409:  # written meanwhile: done again from what is there
            again.add(pair)
        else:
            raise IndexerError(f"Writing a session document failed: {response.error}.")
    if tombstones.removals_seen(client, alias) != seen:
        again = set(writes.sessions)  # a turn they hold may be gone
    if again:
        rebuild(client, alias, again, policy=policy, stats=stats)
    return written


def _missing_index(doc: dict[str, Any]) -> bool:
    error = doc.get("error")
    return isinstance(error, dict) and error.get("type") == "index_not_found_exception"


def rebuild_holding(
    client: Elasticsearch,
    alias: str,
    user_id: str | None,
    ids: Collection[str],
    *,
    policy: RetryPolicy | None = None,
) -> int:
    """Once the events `ids` (`_id`s) are removed, rebuild every session document that
    holds one of them (of `user_id`'s, or of any user when None)."""
    wanted = sorted(ids)
    sessions: set[Session] = set()
    for start in range(0, len(wanted), _PAGE):
        terms = {"terms": {"event_ids": wanted[start : start + _PAGE]}}
        scope = user_filter(user_id) if user_id is not None else []
        sessions |= _sessions_matching(client, alias, [*scope, terms], routing=user_id)
    return rebuild(client, alias, sessions, policy=policy, refresh=True)


def rebuild_reaching_before(
    client: Elasticsearch, alias: str, boundary: Instant, *, policy: RetryPolicy | None = None
) -> int:
    """After a prune removed every partition that ends by `boundary`, rebuild the
    session documents holding turns from before it."""
    reaching = {"range": {"since": {"lt": boundary.to_elasticsearch()}}}
    sessions = _sessions_matching(client, alias, [reaching], routing=None)
    return rebuild(client, alias, sessions, policy=policy, refresh=True)


def _sessions_matching(
    client: Elasticsearch, alias: str, filters: list[dict[str, Any]], *, routing: str | None
) -> set[Session]:
    index = session_index(alias)
    try:
        client.indices.refresh(index=index)
    except NotFoundError:
        return set()  # an alias set up before session documents
    found: set[Session] = set()
    after: list[Any] | None = None
    while True:
        page = client.search(
            index=index,
            routing=routing,
            query={"bool": {"filter": filters}},
            size=_PAGE,
            sort=[{"user_id": "asc"}, {"session_id": "asc"}],
            search_after=after,
            source_includes=["user_id", "session_id"],
            track_total_hits=False,
        ).body["hits"]["hits"]
        found |= {(str(h["_source"]["user_id"]), str(h["_source"]["session_id"])) for h in page}
        if len(page) < _PAGE:
            return found
        after = page[-1]["sort"]


def rebuild_all(
    client: Elasticsearch,
    alias: str,
    *,
    policy: RetryPolicy | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> int:
    """Write the document of every session stored in `alias`: what an alias set up
    before session documents lacks (`setup` runs it once, when it adds their index).
    Reads the sessions a page at a time (a composite aggregation, routed nowhere: every
    user's); `on_progress` is told how many are done after each page."""
    if not exists(client, alias):
        return 0
    client.indices.refresh(index=alias)
    done = 0
    after: dict[str, Any] | None = None
    while True:
        composite: dict[str, Any] = {
            "size": _BATCH,
            "sources": [
                {"user_id": {"terms": {"field": "user_id"}}},
                {"session_id": {"terms": {"field": "session_id"}}},
            ],
        }
        if after is not None:
            composite["after"] = after
        answer = client.search(
            index=alias, size=0, aggs={"sessions": {"composite": composite}}
        ).body["aggregations"]["sessions"]
        buckets = answer.get("buckets", [])
        sessions = [(str(b["key"]["user_id"]), str(b["key"]["session_id"])) for b in buckets]
        done += rebuild(client, alias, sessions, policy=policy)
        if on_progress is not None:
            on_progress(done)
        after = answer.get("after_key")
        if len(buckets) < _BATCH or after is None:
            return done
