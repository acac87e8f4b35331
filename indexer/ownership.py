"""An alias's partitions are its own: made from its own index template, in its alias
and no other.

Elasticsearch grants index templates cluster-wide (there is no privilege for the
templates of some index patterns only), so whoever may put the templates of one alias
may put one that matches another alias's next partitions, with a priority above
theirs and an alias of its own: the partition made from it joins that alias, and
that alias's readers read the other alias's events. `setup` and every writer, before
the first write into a partition, check it here, and refuse to go on, naming the
index (and the template), when it is not the alias's own.

Which template makes a partition is worked out here from the templates themselves
(Elasticsearch's simulation APIs refuse a layout with a routing partition size). A
partition a writer leaves to its bulk request to make (a credential without
`create_index`, such as the ingest role, makes partitions only so, from the
template) is checked before it is made; a template put in the instant between that
check and the bulk is found by the next check of that partition (the next `setup`,
or the next writer to meet it).
"""

import functools
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from session_recall.core.partitions import parse_partition
from session_recall.indexer.errors import IndexerError


class ForeignPartition(IndexerError):
    """A partition of the alias is, or would be, made from another template or held
    by another alias: writing there could show its events to another alias's readers."""


def aliases_of(client: Elasticsearch, alias: str, index: str) -> dict[str, Any] | None:
    """The aliases of the partition `index` of `alias`; None when there is none. A
    name that is an alias of other indices (one another alias's template made) is
    refused: a write to it would go to them."""
    try:
        # The index's own answer, not `_alias`'s: that one leaves out the aliases the
        # credential has no privilege on, which are the very ones looked for here.
        found = client.indices.get(index=index, features="aliases").body
    except NotFoundError:
        return None
    if index not in found:
        raise ForeignPartition(
            f"The name of {alias!r}'s partition {index} is an alias of "
            f"{', '.join(sorted(found))}: a write to it would go there.",
            hint=_NEXT_STEP.format(index=index),
        )
    return dict(found[index].get("aliases", {}))


def check_existing(alias: str, index: str, aliases: dict[str, Any]) -> None:
    """Refuse the partition `index`, whose aliases are `aliases`, unless the alias
    `alias` holds it and no other alias does."""
    foreign = sorted(set(aliases) - {alias})
    if foreign:
        raise ForeignPartition(
            f"The partition {index} of {alias!r} is also in the alias(es) "
            f"{', '.join(map(repr, foreign))}, so their readers read its events: the index "
            f"template of {alias!r} did not make it.",
            hint=_NEXT_STEP.format(index=index),
        )
    if alias not in aliases:
        raise ForeignPartition(
            f"The partition {index} is not in the alias {alias!r}: the index template of "
            f"{alias!r} did not make it.",
            hint=_NEXT_STEP.format(index=index),
        )


def check_new(client: Elasticsearch, alias: str, index: str) -> None:
    """Refuse to make the partition `index` unless `alias`'s own index template would
    make it (it is the highest of those that match the name), into `alias` alone."""
    templates = _templates(client)
    matching = [t for t in templates.values() if any(_overlap(p, index) for p in t.patterns)]
    above = _above(templates, alias, matching)
    if above:
        raise _foreign_templates(alias, above, index)
    _check_own(client, alias, templates)


def check_templates(client: Elasticsearch, alias: str) -> None:
    """Refuse when an index template other than `alias`'s, of a higher priority,
    could match names of its partitions: the partitions made from then on would be
    its; or when `alias`'s own template puts them in another alias."""
    templates = _templates(client)
    own = templates.get(alias)
    if own is None:
        return  # no template of the alias yet
    overlapping = [
        t
        for t in templates.values()
        if any(_overlap(a, b) for a in own.patterns for b in t.patterns)
    ]
    above = _above(templates, alias, overlapping)
    if above:
        raise _foreign_templates(alias, above, None)
    _check_own(client, alias, templates)


def check_partitions(alias: str, indices: dict[str, Any]) -> None:
    """Refuse when a partition of `alias` among `indices` (a get-index answer, with
    the aliases) is another alias's too, or not in `alias`."""
    for index, entry in sorted(indices.items()):
        if parse_partition(alias, index) is not None:
            check_existing(alias, index, entry.get("aliases", {}))


@dataclass(frozen=True)
class _Template:
    name: str
    priority: int
    patterns: tuple[str, ...]
    aliases: frozenset[str]
    composed_of: tuple[str, ...]


def _templates(client: Elasticsearch) -> dict[str, _Template]:
    """Every index template, by name. Elasticsearch's simulation APIs would say which
    one makes an index, but refuse a layout with a routing partition size."""
    found = client.indices.get_index_template().body["index_templates"]
    return {
        entry["name"]: _Template(
            name=entry["name"],
            priority=int(entry["index_template"].get("priority") or 0),
            patterns=tuple(entry["index_template"].get("index_patterns", [])),
            aliases=frozenset(entry["index_template"].get("template", {}).get("aliases", {})),
            composed_of=tuple(entry["index_template"].get("composed_of", [])),
        )
        for entry in found
    }


def _above(templates: dict[str, _Template], alias: str, matching: list[_Template]) -> list[str]:
    """Those of the `matching` index templates whose priority is above `alias`'s own:
    the ones that would make its partitions."""
    own = templates.get(alias)
    mine = own.priority if own is not None else -1
    return sorted(t.name for t in matching if t.name != alias and t.priority > mine)


def _check_own(client: Elasticsearch, alias: str, templates: dict[str, _Template]) -> None:
    """`alias`'s own template, and the component templates it is made of, put its
    partitions in `alias` and in no other alias."""
    own = templates.get(alias)
    if own is None:
        return
    aliases = set(own.aliases)
    if own.composed_of:
        found = client.cluster.get_component_template().body  # one name at a time, or all
        for entry in found.get("component_templates", []):
            if entry["name"] in own.composed_of:
                template = entry["component_template"].get("template", {})
                aliases |= set(template.get("aliases", {}))
    if aliases != {alias}:
        raise ForeignPartition(
            f"The index template of {alias!r} would put its partitions in the aliases "
            f"{', '.join(map(repr, sorted(aliases)))}: other aliases' readers could read their "
            "events, so nothing is written there.",
            hint="Run `session-recall setup` for this alias: it puts its own template back "
            "(another alias's admin may have changed it: Elasticsearch grants templates "
            "cluster-wide).",
        )


@functools.lru_cache(maxsize=4096)
def _overlap(first: str, second: str) -> bool:
    """Whether two index patterns (where `*` is the only wildcard, and an index name is
    a pattern without one) have a name in common."""
    if not first or not second:
        return first.strip("*") == "" and second.strip("*") == ""
    if first[0] == "*":
        return _overlap(first[1:], second) or _overlap(first, second[1:])
    if second[0] == "*":
        return _overlap(first, second[1:]) or _overlap(first[1:], second)
    return first[0] == second[0] and _overlap(first[1:], second[1:])


def _foreign_templates(alias: str, names: list[str], index: str | None) -> ForeignPartition:
    where = f"the partition {index}" if index else "the partitions"
    return ForeignPartition(
        f"The index template(s) {', '.join(map(repr, names))}, of a higher priority than "
        f"the template of {alias!r}, would make {where} of {alias!r}: other aliases' readers "
        "could read their events, so nothing is written there.",
        hint="Another alias's admin may have put it (Elasticsearch grants templates "
        "cluster-wide): remove it, then run `session-recall setup` again.",
    )


_NEXT_STEP = (
    "Another alias's admin may have put an index template that matches this alias's "
    "partitions (Elasticsearch grants templates cluster-wide): remove that template, "
    "move the events of {index} elsewhere or delete it, then run `session-recall setup`."
)
