"""Tombstones: one document per erased scope, in `ALIAS-tombstones`.

The writer reads them before and after every bulk, so events of an erased scope
that arrive later (late retries, replays) are not stored again. They are read with
a realtime `mget`, never cached: a stale answer would let an erased event back in.
The index name does not match the events' template pattern (`ALIAS-0*`), so it
gets its own small mapping here.
"""

from collections.abc import Collection

from elasticsearch import BadRequestError, Elasticsearch

from indexer.retry import Transient
from indexer.scope import Scope
from session_recall.instant import Instant

_KEYWORD = {"type": "keyword"}
MAPPING = {
    "dynamic": "strict",
    "properties": {
        "kind": _KEYWORD,
        "user_id": _KEYWORD,
        "session_id": _KEYWORD,
        "contact_id": _KEYWORD,
        "inbox_id": _KEYWORD,
        "erased_at": {"type": "date_nanos"},
    },
}
# Few documents, read on every bulk: one shard, and a replica wherever there is a node
# for it, since losing a tombstone would let erased events back in.
SETTINGS = {"number_of_shards": 1, "auto_expand_replicas": "0-1"}


def tombstone_index(alias: str) -> str:
    return f"{alias}-tombstones"


def ensure_index(client: Elasticsearch, alias: str) -> None:
    """Create the tombstone index unless it exists. Safe to race with another caller."""
    name = tombstone_index(alias)
    if client.indices.exists(index=name):
        return
    try:
        client.indices.create(
            index=name, mappings=MAPPING, settings=SETTINGS, wait_for_active_shards="1"
        )
    except BadRequestError as err:
        if err.error != "resource_already_exists_exception":
            raise


def record(client: Elasticsearch, alias: str, scope: Scope) -> None:
    """Write the tombstone of `scope` (again, if it exists: erasing twice is fine)."""
    ensure_index(client, alias)
    document = scope.model_dump(exclude_none=True)
    document["erased_at"] = Instant.now().to_elasticsearch()
    client.index(index=tombstone_index(alias), id=scope.id, document=document)


def erased_among(client: Elasticsearch, alias: str, scope_ids: Collection[str]) -> set[str]:
    """The ids in `scope_ids` that have a tombstone, read in real time."""
    if not scope_ids:
        return set()
    index = tombstone_index(alias)
    # No index, no tombstone: the index is created (and acknowledged by every node)
    # before the first tombstone is written. The check is far cheaper than an mget
    # answering "no such index" once per id.
    if not client.indices.exists(index=index):
        return set()
    response = client.mget(
        index=index,
        ids=sorted(scope_ids),
        source=False,
        realtime=True,
        filter_path="docs._id,docs.found,docs.error.type",
    )
    erased = set()
    for doc in response.body.get("docs", ()):
        if doc.get("found"):
            erased.add(doc["_id"])
        elif "error" in doc and doc["error"].get("type") != "index_not_found_exception":
            # An unavailable shard says nothing about the tombstone: do not guess.
            raise Transient(f"tombstone lookup failed: {doc['error'].get('type')}")
    return erased
