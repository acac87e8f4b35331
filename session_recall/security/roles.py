"""The least-privilege roles, defined once (`roles.json`) and given in both forms a
cluster takes: the `role_descriptors` of an API key (`POST /_security/api_key`, on a
hosted or default-distribution cluster) and the `roles.yml` of a file realm (the
local secured node).

Each role covers one alias. Its index names are written in `roles.json` with placeholders:

| placeholder    | stands for                                   | e.g. for `session-events`    |
| -------------- | -------------------------------------------- | ---------------------------- |
| `{alias}`      | the read alias                               | `session-events`             |
| `{partitions}` | its partitions, as a regular expression       | `session-events-2026.07`     |
| `{tombstones}` | its tombstone index                          | `session-events-tombstones`  |
| `{leases}`     | its enrichers' leases                        | `session-events-leases`      |
| `{memories}`   | its kept memories                            | `session-events-memories`    |
| `{consolidation}` | each user's consolidation checkpoint      | `session-events-consolidation` |
| `{sessions}`   | its session documents                        | `session-events-sessions`    |

The partitions are a regular expression rather than `<alias>-*`, which would cover
the tombstones too (and another alias named `<alias>-x`).
"""

import json
import math
import re
import textwrap
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

import yaml

from session_recall.core.access import ROLES, Role
from session_recall.core.index_names import (
    consolidation_index,
    lease_index,
    memory_index,
    session_index,
    tombstone_index,
)

# The roles each command needs, by the CLI's command names (docs/operations.md's table).
COMMAND_ROLES: dict[str, tuple[Role, ...]] = {
    "ingest": ("ingest", "enrich"),  # enrich: the pass after storing (--no-enrich: none)
    "serve": ("ingest", "recall", "enrich"),
    "mcp": ("recall",),
    "search": ("recall",),
    "search-session": ("recall",),
    "search-conversations": ("recall",),
    "memory-search": ("recall",),
    "memories": ("recall",),
    "consolidate": ("enrich",),
    "sessions": ("recall",),
    "show": ("recall",),
    "show-event": ("recall",),
    "embed": ("enrich",),
    "setup": ("admin",),
    "delete": ("admin",),
    "partitions": ("admin",),
    "prune": ("admin",),
    "compact": ("admin",),
    "migrate": ("admin",),
}


def needed_by(command: str) -> tuple[Role, ...]:
    return COMMAND_ROLES.get(command, ("admin",))


@cache
def _definitions() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("roles.json").read_text(encoding="utf-8")
    found: dict[str, Any] = json.loads(text)
    return found


# A role name written as is: what role names of this project hold (see
# `core.index_names.alias_problem`), never a YAML number, boolean or null.
_PLAIN_KEY = re.compile(r"[a-z0-9][a-z0-9_-]*-[a-z]+", re.ASCII)


def role_name(alias: str, role: Role) -> str:
    """The name a role has on a cluster: one set of roles per alias."""
    return f"{alias}-{role}"


def description(role: Role) -> str:
    return str(_definitions()[role]["description"])


def _partitions(alias: str) -> str:
    # A Lucene regular expression (between slashes): `<alias>-2026`, `-2026.07`,
    # `-2026.w27`, and `-000001`. The alias's own characters need no escaping
    # (lowercase letters, digits, `-` and `_`: see `core.index_names.alias_problem`).
    return f"/{alias}-([0-9]{{4}}(\\.([0-9]{{2}}|w[0-9]{{2}}))?|[0-9]{{6}})/"


def descriptor(alias: str, role: Role) -> dict[str, Any]:
    """The role's privileges on `alias`: a role descriptor, as both forms take it."""
    names = {
        "{alias}": alias,
        "{partitions}": _partitions(alias),
        "{tombstones}": tombstone_index(alias),
        "{leases}": lease_index(alias),
        "{memories}": memory_index(alias),
        "{consolidation}": consolidation_index(alias),
        "{sessions}": session_index(alias),
    }
    definition = _definitions()[role]
    return {
        "cluster": list(definition["cluster"]),
        "indices": [
            {"names": [names[n] for n in grant["names"]], "privileges": list(grant["privileges"])}
            for grant in definition["indices"]
        ],
    }


def api_key_body(alias: str, roles: tuple[Role, ...]) -> dict[str, Any]:
    """A body for `POST /_security/api_key`: a key holding only these roles' privileges."""
    return {
        "name": f"session-recall-{alias}-{'-'.join(roles)}",
        "role_descriptors": {role_name(alias, r): descriptor(alias, r) for r in roles},
    }


def roles_yml(alias: str, roles: tuple[Role, ...] = ROLES) -> str:
    """The roles as a file realm's `roles.yml`."""
    document = {role_name(alias, r): descriptor(alias, r) for r in roles}
    header = "".join(f"# {role_name(alias, r)}: {description(r)}\n" for r in roles)
    return header + yml_document(document)


def yml_document(roles: Mapping[str, Any]) -> str:
    """Role descriptors by name, as `roles.yml` holds them: each name a plain key at the
    start of its line, its descriptor indented below. Elasticsearch reads the file one
    role at a time, each from a line that is not indented to the next; PyYAML writes a
    key of 128 characters or more in the explicit `? key` form, whose name and body
    land on two such lines, so Elasticsearch skipped the role ("invalid role
    definition") and every request of its users got 403."""
    parts = []
    for name, body in roles.items():
        key = name if _PLAIN_KEY.fullmatch(name) else json.dumps(name)  # JSON's is YAML's
        parts.append(f"{key}:\n" + textwrap.indent(_dump(body), "  "))
    return "".join(parts)


def _dump(body: Any) -> str:
    # No folding: a partition's regular expression stays on one line, however long.
    return yaml.safe_dump(body, sort_keys=False, width=math.inf)
