"""The partitioned layout as it stands in Elasticsearch: which period the alias
partitions by (the index template's `_meta`, written by `setup`), making a partition
from the template ahead of its first bulk, and listing and pruning partitions."""

from dataclasses import dataclass
from typing import Any

from elasticsearch import AuthorizationException, BadRequestError, Elasticsearch, NotFoundError

from session_recall.core.instant import Instant
from session_recall.core.partitions import (
    GRANULARITIES,
    Granularity,
    Partition,
    parse_partition,
    partition_of,
)
from session_recall.indexer import ownership, tombstones
from session_recall.indexer.document import IDENTITIES, LEGACY_IDENTITY, Identity
from session_recall.indexer.enrichment import memory_erasure
from session_recall.indexer.enrichment.repair import repair_reaching_before
from session_recall.indexer.enrichment.session_documents import rebuild_reaching_before
from session_recall.indexer.erasure import note_removal
from session_recall.indexer.errors import AliasMissing
from session_recall.indexer.retry import RetryPolicy

# Where `setup` records the period, and the identity rule, in the index template's `_meta`.
META_KEY = "partition"
IDENTITY_KEY = "identity"


@dataclass(frozen=True, slots=True)
class WriteLayout:
    """What a writer needs of the alias's layout: its partition period, and which
    fields make an event's identity (a template of an earlier release names none: the
    user and the event id)."""

    granularity: Granularity
    identity: Identity


def write_layout(client: Elasticsearch, alias: str) -> WriteLayout | None:
    """The layout `setup` installed for `alias`; None when it has not installed the
    partitioned layout (no template, or one of the single-index layout)."""
    try:
        found = client.indices.get_index_template(name=alias).body["index_templates"]
    except NotFoundError:
        return None
    return layout_in(found[0]["index_template"].get("_meta", {}))


def require_alias(client: Elasticsearch, alias: str) -> None:
    """Raise `AliasMissing` unless `alias` is an alias. A command that reads what is
    behind it would otherwise find nothing and report nothing to do, or read an index
    that merely bears the name (another alias's tombstones) as if it held events."""
    if client.indices.exists_alias(name=alias):
        return
    what = "an index, not an alias" if client.indices.exists(index=alias) else "not set up"
    raise AliasMissing(
        f"{alias!r} is {what}: there are no events behind it.",
        hint="Check --index (SESSION_RECALL_INDEX), or run "
        f"`session-recall --index {alias} setup`.",
    )


def layout_in(meta: dict[str, Any]) -> WriteLayout | None:
    """What an index template's `_meta` records of the layout (see `write_layout`)."""
    period = next((known for known in GRANULARITIES if meta.get(META_KEY) == known), None)
    if period is None:
        return None
    identity = next((known for known in IDENTITIES if meta.get(IDENTITY_KEY) == known), None)
    return WriteLayout(period, identity or LEGACY_IDENTITY)


def granularity(client: Elasticsearch, alias: str) -> Granularity | None:
    """The period `alias` is partitioned by (see `write_layout`)."""
    layout = write_layout(client, alias)
    return None if layout is None else layout.granularity


def ensure_partition(client: Elasticsearch, alias: str, index: str) -> bool:
    """Make the partition `index` of `alias` from the template, unless it exists; True
    when it is new (made by this call, or left to the write to make).

    Made explicitly rather than by the bulk's auto-creation, which a cluster may have
    turned off (`action.auto_create_index`); the template gives it the mappings,
    the settings and the read alias either way. A credential that may not create an
    index with a request of its own (the ingest role: such a request could carry any
    settings) leaves it to its bulk request, which makes it from the template alone
    (`auto_configure`). Either way the partition is checked first: an existing one
    must be the alias's own, a new one made by the alias's own template
    (`ownership`).
    """
    aliases = ownership.aliases_of(client, alias, index)
    if aliases is not None:
        ownership.check_existing(alias, index, aliases)
        return False
    ownership.check_new(client, alias, index)
    try:
        client.indices.create(index=index, wait_for_active_shards="1")
    except AuthorizationException:
        return True  # the bulk request makes it, from the template
    except BadRequestError as err:
        # Another writer won the race: that is the outcome we wanted.
        if err.error != "resource_already_exists_exception":
            raise
        made = False
    else:
        made = True
    ownership.check_existing(alias, index, ownership.aliases_of(client, alias, index) or {})
    return made


@dataclass(frozen=True, slots=True)
class StoredIndex:
    """An index behind the alias: a partition (with the period it covers) or an
    index of the single-index layout (`partition` None)."""

    index: str
    partition: Partition | None
    docs: int
    size_bytes: int


def stored_indices(client: Elasticsearch, alias: str) -> list[StoredIndex]:
    """Every index behind `alias`: the single-index layout's first, then the
    partitions from the oldest period on. None when the alias does not exist."""
    try:
        # Index statistics rather than `_cat/indices`, which asks for the whole
        # cluster's state: a privilege the admin role has no need of otherwise.
        stats = client.indices.stats(index=alias, metric="docs,store", level="indices").body
    except NotFoundError:
        return []
    found = [
        StoredIndex(
            index=name,
            partition=parse_partition(alias, name),
            docs=int(entry.get("primaries", {}).get("docs", {}).get("count") or 0),
            size_bytes=int(entry.get("total", {}).get("store", {}).get("size_in_bytes") or 0),
        )
        for name, entry in stats.get("indices", {}).items()
    ]
    return sorted(found, key=lambda s: (s.partition is not None, _start(s), s.index))


def _start(stored: StoredIndex) -> int:
    return -1 if stored.partition is None else stored.partition.start.nanos


def ending_before(indices: list[StoredIndex], before: Instant) -> list[StoredIndex]:
    """The partitions whose whole period ends at or before `before`: what `prune`
    deletes. Indices of the single-index layout are never among them."""
    return [s for s in indices if s.partition is not None and s.partition.end <= before]


def prune_partitions(
    client: Elasticsearch,
    alias: str,
    indices: list[StoredIndex],
    before: Instant,
    *,
    policy: RetryPolicy | None = None,
) -> None:
    """Delete `indices` (those `ending_before(..., before)`), then rebuild the contexts
    of the events after them that held their turns: the first turns of each session
    that goes on past them. Run again, it finishes a prune that stopped half-way."""
    delete_partitions(client, indices)
    tombstones.ensure_index(client, alias)
    note_removal(client, alias)
    ends = [s.partition.end for s in indices if s.partition is not None]
    if ends:  # every event stamped before the last of them went with them
        memory_erasure.remove_sourced_before(client, alias, max(ends))
    period = granularity(client, alias)
    if period is not None:
        boundary = partition_of(alias, before, period).start
        repair_reaching_before(client, alias, boundary, policy=policy or RetryPolicy())
        # Found from the boundary alone, as the contexts are: run again, it finishes.
        rebuild_reaching_before(client, alias, boundary, policy=policy)


def delete_partitions(client: Elasticsearch, indices: list[StoredIndex]) -> None:
    """Delete whole partitions, named one by one (never a pattern)."""
    names = [s.index for s in indices if s.partition is not None]
    if names:
        client.indices.delete(index=",".join(names))
