"""Tombstones: one document per erased scope, in `ALIAS-tombstones`.

A tombstone records `erased_at`, the instant its erasure was requested. The writer
refuses an event of the scope stamped at or before it: a late retry or a replay of
what was erased. An event stamped after it is new, and is stored.

The writer reads them before and after every bulk. They are read with a realtime
`mget`, never cached: a stale answer would let an erased event back in. The index
name matches none of the events' partition names (`ALIAS-2026.07`...), so it gets its own
small mapping here.

An event erased on its own has a tombstone of its own scope, one id per event: a
writer asks for those only for users that have one. So the erasure also writes that
user's marker (`scope.events_marker`), and once every event tombstone has its user's
marker (`mark_users`, for those of a release that wrote none), the marker `ALL_MARKED`.
"""

import contextlib
from collections.abc import Collection
from typing import Any

from elasticsearch import BadRequestError, ConflictError, Elasticsearch, NotFoundError

from session_recall.core.index_names import tombstone_index
from session_recall.core.instant import Instant
from session_recall.indexer.retry import Transient
from session_recall.indexer.scope import ALL_MARKED, ANY_EVENT_ERASED, Scope, events_marker

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
    """Create the tombstone index unless it exists (safe to race with another caller);
    one made by an earlier release gains the fields added since."""
    name = tombstone_index(alias)
    if client.indices.exists(index=name):
        client.indices.put_mapping(index=name, properties=MAPPING["properties"])
    else:
        create_unless_exists(client, name, mappings=MAPPING, settings=SETTINGS)


def create_unless_exists(
    client: Elasticsearch, name: str, *, mappings: dict[str, Any], settings: dict[str, Any]
) -> None:
    """Create the index `name`, unless another caller made it first."""
    try:
        client.indices.create(
            index=name, mappings=mappings, settings=settings, wait_for_active_shards="1"
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
    if scope.kind == "event":
        # Before the tombstone itself: from now on, writers look for the own
        # tombstones of this user's events (and of no other user's).
        assert scope.user_id is not None  # an event scope names its user
        _mark_events_of(client, alias, scope.user_id, erased_at)
    _index_moving_forward(client, alias, scope.id, document, erased_at)
    if scope.kind == "event":
        mark_users(client, alias)


def record_events(
    client: Elasticsearch, alias: str, user_id: str, stamps: dict[str, Instant]
) -> None:
    """Write a tombstone of each event id of `user_id` in `stamps`, covering its copies
    stamped up to the instant given: what an erasure removed of them, stamped after its
    own instant, so that its replays are refused. The tombstone index exists."""
    if not stamps:
        return
    _mark_events_of(client, alias, user_id, max(stamps.values(), key=lambda s: s.nanos))
    for event_id, stamp in sorted(stamps.items()):
        document = Scope.event(user_id, event_id).model_dump(exclude_none=True)
        document["erased_at"] = stamp.to_elasticsearch()
        _index_moving_forward(client, alias, Scope.event(user_id, event_id).id, document, stamp)
    mark_users(client, alias)


def _mark_events_of(client: Elasticsearch, alias: str, user_id: str, erased_at: Instant) -> None:
    """Say that an event of `user_id` was erased on its own (`scope.events_marker`)."""
    stamp = erased_at.to_elasticsearch()
    user = {"kind": "user-events", "user_id": user_id, "erased_at": stamp}
    anywhere = {"kind": "event", "erased_at": stamp}
    marker = events_marker(Scope.user(user_id).id)
    for doc_id, body in [(ANY_EVENT_ERASED, anywhere), (marker, user)]:
        _index_moving_forward(client, alias, doc_id, body, erased_at)


def _index_moving_forward(
    client: Elasticsearch, alias: str, doc_id: str, body: dict[str, Any], erased_at: Instant
) -> None:
    # A conflict: a later erasure's tombstone is there already, and covers all this would.
    with contextlib.suppress(ConflictError):
        client.index(
            index=tombstone_index(alias),
            id=doc_id,
            document=body,
            version=erased_at.nanos,
            version_type="external_gte",
        )


_MARKING_PAGE = 1000


def mark_users(client: Elasticsearch, alias: str) -> None:
    """Give every event tombstone its user's marker, then write `ALL_MARKED`, unless it
    is there: once, for the tombstones of a release that wrote no markers. Until then
    writers ask for every event's own tombstone, as that release's did."""
    index = tombstone_index(alias)
    if client.exists(index=index, id=ALL_MARKED, realtime=True):
        return
    client.indices.refresh(index=index)  # the search below sees every tombstone
    latest: dict[str, str] = {}  # user id -> the latest erasure of one of its events
    after: list[Any] | None = None
    while True:
        body: dict[str, Any] = {
            "query": {"term": {"kind": "event"}},
            "sort": [{"user_id": "asc"}, {"event_id": "asc"}],
            "size": _MARKING_PAGE,
            "_source": ["user_id", "erased_at"],
            "track_total_hits": False,
        }
        if after is not None:
            body["search_after"] = after
        hits = client.search(index=index, body=body)["hits"]["hits"]
        for hit in hits:
            source = hit["_source"]
            user, stamp = source.get("user_id"), source.get("erased_at")
            if user is not None and stamp is not None:  # `ANY_EVENT_ERASED` has no user
                latest[user] = max(latest.get(user, stamp), stamp)  # fixed width: sorts
        if len(hits) < _MARKING_PAGE:
            break
        after = hits[-1]["sort"]
    for user, stamp in latest.items():
        with contextlib.suppress(ConflictError):
            client.index(
                index=index,
                id=events_marker(Scope.user(user).id),
                document={"kind": "user-events", "user_id": user, "erased_at": stamp},
                version=Instant.parse(stamp).nanos,
                version_type="external_gte",
            )
    client.index(index=index, id=ALL_MARKED, document={"kind": "all-marked"})


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


# The one document every removal of events writes once it is done (`bump_removals`),
# read by the enrichment pass and by a context's repair before they read and after
# they write (`removals_seen`): an id no scope's digest can be.
_ERASURES = "erasures-marker"


def bump_removals(client: Elasticsearch, alias: str) -> None:
    """Say that events were removed (after their removal, and a refresh): a pass that
    read them before and writes after sees its number move, and checks what it wrote.
    The tombstone index exists (`ensure_index`)."""
    client.index(index=tombstone_index(alias), id=_ERASURES, document={"kind": "erasures"})


def removals_seen(client: Elasticsearch, alias: str) -> int:
    """How many removals `bump_removals` counted, read in real time (0 before any)."""
    try:
        found = client.get(index=tombstone_index(alias), id=_ERASURES, source=False)
    except NotFoundError:  # no such document, or no tombstone index yet
        return 0
    return int(found["_version"])
