"""Index templates kept as JSON, and the names they take for a given alias.

The JSON files are the source of truth; `index_templates(alias)` fills in what depends
on the alias (the component names and the index pattern), so each alias, and so each
test module, gets templates of its own.
"""

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from session_recall.core.order import EVENT_ORDER

COMPONENTS = ("settings", "mappings")


@cache
def _load(name: str) -> dict[str, Any]:
    text = resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text)


@dataclass(frozen=True)
class Templates:
    """The templates for one alias, ready to PUT."""

    alias: str
    components: dict[str, dict[str, Any]]
    index_template_name: str
    index_template: dict[str, Any]


def index_templates(
    alias: str, *, patterns: list[str], settings: dict[str, Any], meta: dict[str, Any]
) -> Templates:
    """The templates of `alias`'s partitions: every index matching `patterns` is
    made with the mappings, `settings` on top of the component's, and joins the read
    alias `alias` (the template's `aliases`), however it is created: ahead of time by
    `setup` or on first write. `meta` goes into the template's `_meta` (the layout).

    Every partition is sorted on disk in the event order that recall pages in: a page
    from the start of a partition, or from a cursor's position, then stops after its
    hits instead of visiting every match, so its cost does not grow with the history.
    """
    components = {f"{alias}-{part}": _load(f"component-{part}") for part in COMPONENTS}
    body = dict(_load("index-template"))
    body["index_patterns"] = patterns
    body["composed_of"] = list(components)
    body["_meta"] = {**body["_meta"], **meta}
    index_settings = {"sort": index_sort(), **settings}
    body["template"] = {"settings": {"index": index_settings}, "aliases": {alias: {}}}
    return Templates(
        alias=alias,
        components=components,
        index_template_name=alias,
        index_template=body,
    )


def index_sort() -> dict[str, list[str]]:
    """`index.sort`: the fields and directions of the event order (core.order)."""
    pairs = [next(iter(key.items())) for key in EVENT_ORDER]
    return {"field": [field for field, _ in pairs], "order": [order for _, order in pairs]}


def mapping_update() -> dict[str, Any]:
    """The event mapping's fields and dynamic templates, as `put_mapping` takes them.

    `setup` puts them on every index behind the alias, so an index created by an
    earlier release gains the fields added since (the vector fields, say): adding a
    field is allowed on a live index, and putting one already there changes nothing.
    """
    mappings = _load("component-mappings")["template"]["mappings"]
    return {
        "properties": mappings["properties"],
        "dynamic_templates": mappings["dynamic_templates"],
    }


def memory_index_body() -> dict[str, Any]:
    """The memories index's settings and mappings (`memories.json`), as `create` takes them."""
    found = _load("memories")
    return {"settings": found["settings"], "mappings": found["mappings"]}


def session_index_body() -> dict[str, Any]:
    """The session documents' index settings and mappings (`sessions.json`), as `create`
    takes them."""
    found = _load("sessions")
    return {"settings": found["settings"], "mappings": found["mappings"]}


__all__ = [
    "COMPONENTS",
    "Templates",
    "index_sort",
    "index_templates",
    "mapping_update",
    "memory_index_body",
    "session_index_body",
]
