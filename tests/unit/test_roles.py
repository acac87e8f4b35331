"""The roles are defined once: the API key's role descriptors and the file realm's
roles.yml grant exactly the same, and each role's index names cover what it must
and nothing of another alias (its partitions' regular expression included)."""

import re
from datetime import UTC, datetime

import yaml
from hypothesis import given
from hypothesis import strategies as st

from session_recall.cli import COMMANDS
from session_recall.core.access import ROLES
from session_recall.core.instant import Instant
from session_recall.core.partitions import GRANULARITIES, PartitionNames
from session_recall.indexer.tombstones import tombstone_index
from session_recall.security.roles import (
    COMMAND_ROLES,
    api_key_body,
    descriptor,
    role_name,
    roles_yml,
)
from tests.support.elasticsearch import REPO

ALIASES = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,30}", fullmatch=True)


@given(alias=ALIASES)
def test_the_api_key_and_the_file_forms_grant_the_same(alias: str) -> None:
    from_file = yaml.safe_load(roles_yml(alias))
    from_key = api_key_body(alias, ROLES)["role_descriptors"]
    assert from_file == from_key
    assert set(from_key) == {role_name(alias, role) for role in ROLES}


def _covers(pattern: str, index: str) -> bool:
    """Whether a role's index name covers `index`: Lucene regular expressions between
    slashes (whose syntax this subset shares with Python's), else the exact name."""
    if pattern.startswith("/") and pattern.endswith("/"):
        return re.fullmatch(pattern[1:-1], index) is not None
    return pattern == index


def _granted(alias: str, role: str, index: str) -> set[str]:
    found: set[str] = set()
    for grant in descriptor(alias, role)["indices"]:  # type: ignore[arg-type]
        if any(_covers(name, index) for name in grant["names"]):
            found.update(grant["privileges"])
    return found


@given(
    alias=ALIASES,
    granularity=st.sampled_from(GRANULARITIES),
    moment=st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2260, 1, 1)),
)
def test_partitions_are_covered_and_the_tombstones_are_apart(
    alias: str, granularity: str, moment: datetime
) -> None:
    stamp = Instant.from_datetime(moment.replace(tzinfo=UTC))
    partition = PartitionNames(alias, granularity).index(stamp)  # type: ignore[arg-type]
    # Named actions, not the broad privileges that read through metadata: ingest may
    # neither read an event nor choose a partition's settings.
    assert _granted(alias, "ingest", partition) == {
        "create_doc",
        "auto_configure",
        "indices:admin/get",
        "indices:admin/aliases/get",
        "indices:admin/refresh*",
    }
    assert _granted(alias, "recall", partition) == {"read", "indices:admin/aliases/get"}
    assert _granted(alias, "enrich", partition) == {
        "read",
        "index",
        "indices:admin/aliases/get",
        "indices:admin/mappings/get",
        "indices:admin/refresh*",
    }
    tombstones = tombstone_index(alias)
    assert _granted(alias, "ingest", tombstones) == {"indices:admin/get", "indices:data/read/mget*"}
    assert _granted(alias, "recall", tombstones) == set()
    # Another alias that starts with this one's name is none of its business.
    for other in (f"{alias}-x", f"{alias}x"):
        for role in ROLES:
            assert _granted(alias, role, PartitionNames(other, "month").index(stamp)) == set()
            assert _granted(alias, role, tombstone_index(other)) == set()


def test_every_command_that_reads_or_writes_events_names_its_roles() -> None:
    local = {"node", "tools", "roles", "users", "models", "tokens"}  # no Elasticsearch credentials
    assert set(COMMANDS) - local == set(COMMAND_ROLES)
    assert all(set(roles) <= set(ROLES) for roles in COMMAND_ROLES.values())


BROAD = {
    "view_index_metadata",
    "monitor",
    "manage",
    "maintenance",
    "create_index",
    "manage_index_templates",
}


def test_no_role_holds_a_privilege_that_reads_more_than_its_name_says() -> None:
    """`view_index_metadata` lists an index's terms (`_validate/query` with rewrite),
    `monitor` shows running searches (`_tasks`), `create_index` takes any settings,
    `maintenance` force-merges, `manage_index_templates` deletes templates too."""
    for role in ROLES:
        found = descriptor("events", role)
        granted = set(found["cluster"]) | {
            p for grant in found["indices"] for p in grant["privileges"]
        }
        assert not granted & BROAD, (role, granted & BROAD)


def test_the_operations_page_gives_every_privilege_of_every_role_with_its_reason() -> None:
    page = (REPO / "docs" / "operations.md").read_text()
    for role in ROLES:
        section = page.split(f"**{role}**", 1)[1].split("\n\n", 2)[:2]
        table = "\n".join(section)
        rows = [row for row in table.splitlines() if row.startswith("| ")]
        assert rows, role
        found = descriptor("events", role)
        granted = set(found["cluster"]) | {
            p for grant in found["indices"] for p in grant["privileges"]
        }
        for privilege in granted:
            short = privilege.rsplit("/", 1)[-1]
            assert any(privilege in row or f"`_{short}`" in row for row in rows), (role, privilege)
        assert all(row.count("|") == 4 and row.split("|")[3].strip() for row in rows[2:]), role


@given(alias=st.from_regex(r"[a-z0-9][a-z0-9_]{0,199}", fullmatch=True))
def test_each_role_starts_a_line_of_roles_yml_as_a_plain_key(alias: str) -> None:
    """Elasticsearch reads roles.yml one role at a time, from each line that is not
    indented: a name in YAML's `? key` form (PyYAML's for keys of 128 characters or
    more) split a role in two, and the role was skipped."""
    text = roles_yml(alias)
    tops = [line for line in text.splitlines() if line and not line[0].isspace()]
    tops = [line for line in tops if not line.startswith("#")]
    assert tops == [f"{role_name(alias, role)}:" for role in ROLES]
    assert yaml.safe_load(text) == api_key_body(alias, ROLES)["role_descriptors"]
