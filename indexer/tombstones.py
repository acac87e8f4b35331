"""Tombstones: one document per erased scope, in `ALIAS-tombstones`.

A tombstone records `erased_at`, the instant its erasure was requested. The writer
refuses an event of the scope stamped at or before it: a late retry or a replay of
what was erased. An event stamped after it is new, and is stored.

The writer reads them before and after every bulk. They are read with a realtime
`mget`, never cached: a stale answer would let an erased event back in. The index
name matches none of the events' partition names (`ALIAS-2026.07`...), so it gets its own
small mapping here.
"""

import contextlib
from collections.abc import Collection
from typing import Any

from elasticsearch import BadRequestError, ConflictError, Elasticsearch, NotFoundError

from session_recall.core.index_names import tombstone_index
from session_recall.core.instant import Instant
from session_recall.indexer.retry import Transient
from session_recall.indexer.scope import ANY_EVENT_ERASED, Scope

_KEYWORD = {"type": "keyword"}
MAPPING: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {
        "kind": _KEYWORD,
        "user_id": _KEYWORD,
        "session_id": _KEYWORD,
        "contact_id": _KEYWORD,
        "inbox_id": _KEYWORD,
        "event_id": _KEYWORD,
        "erased_at": {"type": "date_nanos"},
        # A repair under way (`kind: repair`): the events being removed, whose
        # contexts are rebuilt once they are gone (`erasure.forgetting`).
        "ids": {"type": "keyword", "index": False, "doc_values": False},
    },
}
# Few documents, read on every bulk: one shard, and a replica wherever there is a node
# for it, since losing a tombstone would let erased events back in.
SETTINGS = {"number_of_shards": 1, "auto_expand_replicas": "0-1"}
# Later than any instant an event can carry (date_nanos ends in 2262).
COVERS_ALL = 2**63 - 1


def ensure_index(client: Elasticsearch, alias: str) -> None:
    """Create the tombstone index unless it exists. Safe to race with another caller."""
    name = tombstone_index(alias)
    if client.indices.exists(index=name):
        # Made by an earlier release: it gains the fields added since (an event's id).
        client.indices.put_mapping(index=name, properties=MAPPING["properties"])
        return
    try:
        client.indices.create(
            index=name, mappings=MAPPING, settings=SETTINGS, wait_for_active_shards="1"
        )
    except BadRequestError as err:
        if err.error != "resource_already_exists_exception":
            raise


def record(client: Elasticsearch, alias: str, scope: Scope, *, erased_at: Instant) -> None:
    """Write the tombstone of `scope`, covering events stamped up to `erased_at`.

    `erased_at` only ever moves forward: it is also the document's external version,
    so a tombstone already covering more (a later erasure of the same scope) is kept.
    """
    ensure_index(client, alias)
    document = scope.model_dump(exclude_none=True)
    document["erased_at"] = erased_at.to_elasticsearch()
    tombstones = [(scope.id, document)]
    if scope.kind == "event":  # from now on, writers look for events' own tombstones
        marker = {"kind": "event", "erased_at": document["erased_at"]}
        tombstones.insert(0, (ANY_EVENT_ERASED, marker))
    for doc_id, body in tombstones:
        # A conflict: a later erasure's tombstone is there already, and covers all
        # this would.
        with contextlib.suppress(ConflictError):
            client.index(
                index=tombstone_index(alias),
                id=doc_id,
                document=body,
                version=erased_at.nanos,
                version_type="external_gte",
            )


def index_exists(client: Elasticsearch, alias: str) -> bool:
    """Whether the tombstone index exists. Once it does, it may be taken to: were it
    deleted, the `mget` of `erased_at` answers "no such index", read as no tombstone,
    which is what its absence means."""
    return bool(client.indices.exists(index=tombstone_index(alias)))


def erased_at(
    client: Elasticsearch, alias: str, scope_ids: Collection[str], *, index_seen: bool = False
) -> dict[str, int]:
    """The ids in `scope_ids` that have a tombstone, each with its `erased_at` in
    nanoseconds, read in real time. `index_seen`: the tombstone index was seen to
    exist before (`index_exists`), so it is not looked for again."""
    if not scope_ids:
        return {}
    index = tombstone_index(alias)
    # No index, no tombstone: the index is created (and acknowledged by every node)
    # before the first tombstone is written. The check is far cheaper than an mget
    # answering "no such index" once per id.
    if not index_seen and not index_exists(client, alias):
        return {}
    response = client.mget(
        index=index,
        ids=sorted(scope_ids),
        source_includes=["erased_at"],
        realtime=True,
        filter_path="docs._id,docs.found,docs._source.erased_at,docs.error.type",
    )
    erased = {}
    for doc in response.body.get("docs", ()):
        if doc.get("found"):
            stamp = doc.get("_source", {}).get("erased_at")
            # A tombstone without its instant is not ours to second-guess: it covers all.
            erased[doc["_id"]] = Instant.parse(stamp).nanos if stamp else COVERS_ALL
        elif "error" in doc and doc["error"].get("type") != "index_not_found_exception":
            # An unavailable shard says nothing about the tombstone: do not guess.
            raise Transient(f"tombstone lookup failed: {doc['error'].get('type')}")
    return erased


# The one document every removal of events writes once it is done (`note_erasure`),
# read by the enrichment pass before and after each page (`erasures_seen`): an id no
# scope's digest can be.
_ERASURES = "erasures-marker"


def note_erasure(client: Elasticsearch, alias: str) -> None:
    """Say that events were removed (after their removal, and a refresh): a pass that
    read them before and writes after sees its number move, and checks what it wrote."""
    ensure_index(client, alias)
    client.index(index=tombstone_index(alias), id=_ERASURES, document={"kind": "erasures"})


def erasures_seen(client: Elasticsearch, alias: str) -> int:
    """How many removals `note_erasure` counted, read in real time (0 before any)."""
    try:
        found = client.get(index=tombstone_index(alias), id=_ERASURES, source=False)
    except NotFoundError:  # no such document, or no tombstone index yet
        return 0
    return int(found["_version"])
