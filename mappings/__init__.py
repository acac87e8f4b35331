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
    first_index: str


def index_templates(alias: str) -> Templates:
    components = {f"{alias}-{part}": _load(f"component-{part}") for part in COMPONENTS}
    body = dict(_load("index-template"))
    # Rollover names indices ALIAS-000002 and so on; "-0*" keeps the tombstone index
    # (ALIAS-tombstones) and other aliases' indices out of this pattern.
    body["index_patterns"] = [f"{alias}-0*"]
    body["composed_of"] = list(components)
    # The write alias is attached to the bootstrap index, not set in the template:
    # a template alias would be added to every index that rollover creates, too.
    return Templates(
        alias=alias,
        components=components,
        index_template_name=alias,
        index_template=body,
        first_index=f"{alias}-000001",
    )


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


__all__ = ["Templates", "index_templates", "mapping_update"]
