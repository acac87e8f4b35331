"""`setup`: install the index templates (the partitioned layout) and the first partition.

The layout (period per partition, shards, routing partition size, replicas) lives in
the index template: its `_meta` and settings. Partitions are made from it on first
write, so a value left out on a later `setup` keeps the one chosen before.
"""

import re
from dataclasses import dataclass
from typing import Any

from elasticsearch import BadRequestError, Elasticsearch, NotFoundError

from session_recall.core.errors import ErrorKind, SessionRecallError
from session_recall.core.index_names import (
    ALIAS_RULE,
    alias_problem,
    bookkeeping_indices,
    memory_index,
    session_index,
)
from session_recall.core.instant import Instant
from session_recall.core.partitions import (
    DEFAULT_GRANULARITY,
    GRANULARITIES,
    Granularity,
    index_patterns,
    parse_partition,
    partition_of,
)
from session_recall.indexer import ownership, tombstones
from session_recall.indexer.document import DEFAULT_IDENTITY, LEGACY_IDENTITY, Identity
from session_recall.indexer.layout import IDENTITY_KEY, META_KEY, ensure_partition, layout_in
from session_recall.indexer.tombstones import create_unless_exists
from session_recall.mappings import (
    COMPONENTS,
    index_templates,
    mapping_update,
    memory_index_body,
    session_index_body,
)


class InvalidLayout(SessionRecallError):
    """The layout asked for cannot be made, or would break replays: change the options."""

    kind = ErrorKind.CALLER


class AliasConflict(SessionRecallError):
    """The alias could share indices with another alias (by its name, or by an index or
    template already there): nothing was made; name another alias."""

    kind = ErrorKind.CALLER


# Reported by name, up to this many: enough to find them, one line still.
_SHOWN = 3


@dataclass(frozen=True)
class Layout:
    """How partitions are made. `routing_partition_size` 1: one shard per user and
    partition; above 1, a user's events spread over that many of the `shards`."""

    granularity: Granularity = DEFAULT_GRANULARITY
    shards: int = 1
    routing_partition_size: int = 1
    replicas: int = 0
    # What makes an event one (see `document.Identity`): recorded once, never changed.
    identity: Identity = DEFAULT_IDENTITY

    def settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = {
            "number_of_shards": self.shards,
            "number_of_replicas": self.replicas,
        }
        if self.routing_partition_size > 1:
            settings["routing_partition_size"] = self.routing_partition_size
        return settings

    def check(self) -> None:
        if self.granularity not in GRANULARITIES:
            raise InvalidLayout(f"Unknown partition period {self.granularity!r}.")
        if self.shards < 1 or self.replicas < 0 or self.routing_partition_size < 1:
            raise InvalidLayout(
                "Shards and the routing partition size must be 1 or more, replicas 0 or more."
            )
        if self.routing_partition_size > 1 and self.routing_partition_size >= self.shards:
            raise InvalidLayout(
                f"A routing partition size of {self.routing_partition_size} needs more "
                f"shards than that per partition (there are {self.shards}).",
                hint=f"Pass --shards {self.routing_partition_size + 1} or more.",
            )


@dataclass(frozen=True)
class SetupResult:
    alias: str
    layout: Layout
    partition: str  # the current period's, made ahead of time
    created_index: bool
    # Indices of the single-index layout behind the alias: read, never written to.
    legacy: tuple[str, ...] = ()
    # The session documents' index was made now, on an alias that held events already:
    # their documents are to be written (`session_documents.rebuild_all`).
    sessions_to_write: bool = False


def current_layout(client: Elasticsearch, alias: str) -> Layout | None:
    """The layout `setup` installed for `alias`, or None before the first `setup`."""
    try:
        found = client.indices.get_index_template(name=alias).body["index_templates"]
    except NotFoundError:
        return None
    template = found[0]["index_template"]
    stored = layout_in(template.get("_meta", {}))
    if stored is None:
        return None  # a template of the single-index layout
    index = template.get("template", {}).get("settings", {}).get("index", {})
    return Layout(
        granularity=stored.granularity,
        identity=stored.identity,
        shards=int(index.get("number_of_shards", 1)),
        routing_partition_size=int(index.get("routing_partition_size", 1)),
        replicas=int(index.get("number_of_replicas", 0)),
    )


def install(client: Elasticsearch, alias: str, **changes: Any) -> SetupResult:
    """Install (or update) the templates, then make sure the current period's
    partition exists, so the read alias does too, and the tombstone index
    (`ALIAS-tombstones`, ready once this returns).

    `changes` (granularity, shards, routing_partition_size, replicas) override the
    layout installed before, or the defaults. Safe to run any number of times. A new
    shard count or routing partition size applies to partitions made from then on;
    a new replica count to the existing ones as well. A new period applies to
    partitions made from then on, and leaves each stored event where it is.
    """
    given = {key: value for key, value in changes.items() if value is not None}
    refusal = alias_problem(alias)
    if refusal is not None:
        raise AliasConflict(refusal, hint=ALIAS_RULE)
    exists = bool(client.indices.exists_alias(name=alias))
    _refuse_foreign_names(client, alias, exists=exists)
    # No partitioned layout yet: an alias of the single-index layout holds events from
    # before the identity rule was recorded, and keeps theirs so that replays meet them.
    previous = current_layout(client, alias) or Layout(
        identity=LEGACY_IDENTITY if exists else DEFAULT_IDENTITY
    )
    layout = Layout(**{**previous.__dict__, **given})
    layout.check()
    if layout.granularity != previous.granularity and _partitions(client, alias):
        raise InvalidLayout(
            f"{alias!r} is partitioned by {previous.granularity}; a new period would put a "
            "replayed event in another partition than its stored copy, so it would be "
            "stored twice.",
            hint=f"Keep --partition {previous.granularity}, or set up a new alias.",
        )
    templates = index_templates(
        alias,
        patterns=index_patterns(alias),
        settings=layout.settings(),
        meta={META_KEY: layout.granularity, IDENTITY_KEY: layout.identity},
    )
    new = [n for n in templates.components if not client.cluster.exists_component_template(name=n)]
    for name, body in templates.components.items():
        client.cluster.put_component_template(name=name, **body)
    try:
        client.indices.put_index_template(
            name=templates.index_template_name, **templates.index_template
        )
    except BadRequestError as err:
        for name in new:  # a refused setup leaves nothing behind
            client.options(ignore_status=404).cluster.delete_component_template(name=name)
        raise _template_refused(alias, err) from None
    # Another alias's admin may put templates too (Elasticsearch grants them
    # cluster-wide): the partitions are checked to be this alias's alone.
    ownership.check_templates(client, alias)
    named = (
        client.options(ignore_status=404).indices.get(index=f"{alias}-*", features="aliases").body
    )
    ownership.check_partitions(alias, named if isinstance(named, dict) else {})

    legacy: tuple[str, ...] = ()
    if exists:
        legacy = tuple(i for i in _behind(client, alias) if parse_partition(alias, i) is None)
        # Indices made by an earlier release gain the fields added since.
        client.indices.put_mapping(index=alias, **mapping_update())
        if "replicas" in given:
            client.indices.put_settings(
                index=alias, settings={"index": {"number_of_replicas": layout.replicas}}
            )
    partition = partition_of(alias, Instant.now(), layout.granularity).index
    created = ensure_partition(client, alias, partition)
    # Made here, not by the first erasure: writers and enrichment followers read it all
    # the time, and an index made while they run answers "no shard available" to them
    # until its shard starts. It is created once its primary is active.
    tombstones.ensure_index(client, alias)
    ensure_memory_index(client, alias)
    sessions_made = ensure_session_index(client, alias)
    return SetupResult(
        alias=alias, layout=layout, partition=partition, created_index=created, legacy=legacy,
        sessions_to_write=sessions_made and exists,
    )  # fmt: skip


def ensure_memory_index(client: Elasticsearch, alias: str) -> bool:
    """Create `alias`'s memories index (`mappings/memories.json`) unless it exists, in
    which case it gains the fields added since; whether it was created."""
    name, body = memory_index(alias), memory_index_body()
    if client.indices.exists(index=name):
        mappings = body["mappings"]
        client.indices.put_mapping(
            index=name,
            properties=mappings["properties"],
            dynamic_templates=mappings["dynamic_templates"],
        )
        return False
    create_unless_exists(client, name, mappings=body["mappings"], settings=body["settings"])
    return True


def ensure_session_index(client: Elasticsearch, alias: str) -> bool:
    """Create `alias`'s session documents' index (`mappings/sessions.json`) unless it
    exists, in which case it gains the fields added since; whether it was created."""
    name, body = session_index(alias), session_index_body()
    if client.indices.exists(index=name):
        client.indices.put_mapping(index=name, properties=body["mappings"]["properties"])
        return False
    create_unless_exists(client, name, mappings=body["mappings"], settings=body["settings"])
    return True


def _refuse_foreign_names(client: Elasticsearch, alias: str, *, exists: bool) -> None:
    """Refuse, before anything is made, an alias whose names are taken: by an index of
    that very name, by indices its template would take in that are not its own (another
    alias's, made before names were checked), or by an alias holding its tombstones'."""
    if not exists and client.indices.exists(index=alias):
        raise AliasConflict(
            f"{alias!r} is the name of an index, so it cannot be an alias.",
            hint=ALIAS_RULE,
        )
    for bookkeeping in bookkeeping_indices(alias):
        if client.indices.exists_alias(name=bookkeeping):
            raise AliasConflict(
                f"{bookkeeping!r}, the name of an index of {alias!r}'s own, is an alias already.",
                hint=ALIAS_RULE,
            )
    found = client.indices.get_alias(
        index=index_patterns(alias),
        expand_wildcards="all",
        allow_no_indices=True,
        ignore_unavailable=True,
    ).body
    foreign = sorted(index for index, held in found.items() if alias not in held["aliases"])
    if foreign:
        shown = ", ".join(foreign[:_SHOWN]) + (", ..." if len(foreign) > _SHOWN else "")
        raise AliasConflict(
            f"{len(foreign)} index(es) not behind {alias!r} have names of its partitions "
            f"({shown}): {alias!r} would take them in.",
            hint=ALIAS_RULE,
        )


def _template_refused(alias: str, err: BadRequestError) -> AliasConflict:
    """Elasticsearch's refusal of the index template, in one line: most likely another
    template of the same priority matching the same names (made before names were
    checked)."""
    body = err.body if isinstance(err.body, dict) else {}
    reason = str(body.get("error", {}).get("reason") or err.message)
    others = re.search(r"existing templates \[([^\]]*)\]", reason)
    if others is None:
        return AliasConflict(f"Elasticsearch refused {alias!r}'s index template: {reason}")
    return AliasConflict(
        f"The index template(s) {others[1]} match names of {alias!r}'s partitions too.",
        hint=ALIAS_RULE,
    )


def _behind(client: Elasticsearch, alias: str) -> list[str]:
    """The indices behind `alias`, none when there is no such alias."""
    try:
        return sorted(client.indices.get_alias(name=alias).body)
    except NotFoundError:
        return []


def _partitions(client: Elasticsearch, alias: str) -> list[str]:
    return [i for i in _behind(client, alias) if parse_partition(alias, i) is not None]


def uninstall(client: Elasticsearch, alias: str) -> None:
    """Delete every index of `alias` (its partitions, the single-index layout's, the
    tombstones and leases) and its templates: what a test or a benchmark made, gone. Only its own:
    never `<alias>-*`, which holds the indices of an alias named `<alias>-x`."""
    lenient = client.options(ignore_status=404)
    client.indices.delete(
        index=[*_behind(client, alias), *index_patterns(alias), *bookkeeping_indices(alias)],
        ignore_unavailable=True,
        allow_no_indices=True,
    )
    lenient.indices.delete_index_template(name=alias)
    for part in COMPONENTS:
        lenient.cluster.delete_component_template(name=f"{alias}-{part}")
