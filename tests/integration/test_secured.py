"""The product on a secured node: HTTPS with the node's own CA, and each command run
with the credential of its role only (`roles.json`). What each role may not do is
refused by Elasticsearch itself, and the CLI says which role the work needs; what it
may do works as on an open node. No output or log of the tier shows a password."""

import logging
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from click.testing import CliRunner, Result
from elasticsearch import AuthorizationException, Elasticsearch
from mcp import StdioServerParameters
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.access import ROLES, Role
from session_recall.http import create_app
from session_recall.node import LocalNode, wait_until
from session_recall.node.secure import Security
from session_recall.node.users import FileRealm
from session_recall.recall import CrossSessionSearcher
from session_recall.recall.partition_map import PartitionMap
from session_recall.security.roles import descriptor
from tests.integration.test_mcp import _session_calls, _text
from tests.support.cli import CLI
from tests.support.elasticsearch import authenticates, home_for_tests
from tests.support.ndjson import append_ndjson, checkpoint_offset, write_ndjson
from tests.support.pages import served

pytestmark = pytest.mark.integration

ALIAS = "secured-tier"
KEY = b"secured-tier-test-cursor-key-32b"
NODE = "tests-secured"


@dataclass
class Secured:
    url: str
    ca: Path
    passwords: dict[str, str]  # a role's, and serve's (ingest, recall and enrich)
    home: Path
    node: LocalNode
    outputs: list[str]

    def user(self, role: str) -> str:
        return f"tier-{role}"

    def client(self, role: str) -> Elasticsearch:
        return Elasticsearch(
            self.url, basic_auth=(self.user(role), self.passwords[role]), ca_certs=str(self.ca)
        )

    def env(self, role: str, ca: Path | None = None) -> dict[str, str | None]:
        return {
            "ELASTICSEARCH_URL": self.url,
            "ELASTICSEARCH_USERNAME": self.user(role),
            "ELASTICSEARCH_PASSWORD": self.passwords[role],
            "ELASTICSEARCH_CA_CERTS": str(ca or self.ca),
            "ELASTICSEARCH_API_KEY": None,
            "SESSION_RECALL_INDEX": ALIAS,
            "SESSION_RECALL_HOME": str(self.home),
        }

    def settings(self, role: str, home: Path, **reads: str) -> Settings:
        """`serve`'s settings with the credential of `role`, and `reads` for searches."""
        return Settings(
            ELASTICSEARCH_URL=self.url,
            ELASTICSEARCH_USERNAME=self.user(role),
            ELASTICSEARCH_PASSWORD=self.passwords[role],
            ELASTICSEARCH_CA_CERTS=self.ca,
            SESSION_RECALL_INDEX=ALIAS,
            SESSION_RECALL_HOME=home,
            **reads,
        )

    def run(self, role: str, *args: str, ca: Path | None = None, stdin: str = "") -> Result:
        env = self.env(role, ca)
        result = CliRunner().invoke(main, list(args), env=env, input=stdin)
        self.outputs.append(result.output)
        return result


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    """One secured node for the module, with a user per role."""
    security = Security(tmp_path_factory.mktemp("security"))
    node = LocalNode(home=home_for_tests(), name=NODE, security=security)
    node.wipe()  # a node of an earlier run kept other secrets
    info = node.start(on_step=lambda _m: None)
    realm = FileRealm([node.node_dir / "config"])
    passwords: dict[str, str] = {
        role: realm.create(f"tier-{role}", (role,), ALIAS) for role in ROLES
    }
    passwords["serve"] = realm.create("tier-serve", ("ingest", "recall", "enrich"), ALIAS)
    found = Secured(
        url=info.url,
        ca=security.ca,
        passwords=passwords,
        home=tmp_path_factory.mktemp("home"),
        node=node,
        outputs=[],
    )
    for role in passwords:  # the node reads its users' file again within seconds
        client = found.client(role)
        assert wait_until(lambda c=client: authenticates(c, ALIAS), timeout=60), role
    try:
        yield found
    finally:
        node.wipe()


@pytest.fixture(scope="module")
def set_up(secured: Secured) -> Secured:
    result = secured.run("admin", "setup")
    assert result.exit_code == 0, result.output
    return secured


def event(
    *,
    user: str,
    session: str,
    event_id: str,
    timestamp: str = "2024-02-10T10:00:00Z",
    text: str = "a message",
) -> dict[str, str]:
    return {
        "user_id": user,
        "session_id": session,
        "event_id": event_id,
        "timestamp": timestamp,
        "type": "user_message",
        "text": text,
    }


def _ingest(secured: Secured, tmp_path: Path, role: Role, *events: dict[str, object]) -> Result:
    source = write_ndjson(tmp_path / f"{role}.ndjson", list(events))
    return secured.run(role, "ingest", str(source), "--no-enrich")


def _hits(secured: Secured, user: str) -> list[dict[str, Any]]:
    admin = secured.client("admin")
    admin.indices.refresh(index=ALIAS)
    query = {"term": {"user_id": user}}
    found: list[dict[str, Any]] = admin.search(index=ALIAS, query=query, size=100)["hits"]["hits"]
    return found


def _stored(secured: Secured, user: str) -> list[str]:
    return sorted(hit["_source"]["event_id"] for hit in _hits(secured, user))


def test_the_node_speaks_https_only_to_its_own_ca(secured: Secured, tmp_path: Path) -> None:
    assert secured.url.startswith("https://")
    other = Security(tmp_path / "other").prepare()
    result = secured.run("recall", "search", "--user", "u", "x", ca=other.ca)
    assert result.exit_code == 3
    assert "ELASTICSEARCH_CA_CERTS" in result.output
    assert "Traceback" not in result.output


def test_an_anonymous_or_wrong_credential_is_refused_with_the_next_step(
    secured: Secured,
) -> None:
    secured.passwords["recall"], right = (
        "wrong-" + secured.passwords["recall"],
        (secured.passwords["recall"]),
    )
    try:
        result = secured.run("recall", "search", "--user", "u", "x")
    finally:
        secured.passwords["recall"] = right
    assert result.exit_code == 3
    assert "refused the credentials (401)" in result.output
    assert "users create" in result.output


def test_ingest_stores_creates_a_month_and_never_overwrites(
    set_up: Secured, tmp_path: Path
) -> None:
    first = event(user="ivy", session="s1", event_id="e1", timestamp="2024-02-10T10:00:00Z")
    result = _ingest(set_up, tmp_path, "ingest", first)
    assert result.exit_code == 0, result.output
    assert "indexed 1" in result.output
    # The month had no partition: the ingest role made it from the template.
    assert set_up.client("admin").indices.exists(index=f"{ALIAS}-2024.02")
    again = _ingest(set_up, tmp_path, "ingest", {**first, "text": "changed"})
    assert again.exit_code == 0, again.output
    assert "already present 1" in again.output
    assert _stored(set_up, "ivy") == ["e1"]
    # Around the CLI too: Elasticsearch refuses an overwrite, a read and a delete.
    ingest = set_up.client("ingest")
    index = f"{ALIAS}-2024.02"
    hit = _hits(set_up, "ivy")[0]
    target = {"_index": hit["_index"], "_id": hit["_id"], "routing": hit["_routing"]}
    answer = ingest.bulk(operations=[{"index": target}, {**hit["_source"], "text": "changed"}])
    assert answer["items"][0]["index"]["status"] == 403
    assert _hits(set_up, "ivy")[0]["_source"]["text"] == "a message"
    with pytest.raises(AuthorizationException):
        ingest.search(index=ALIAS, query={"match_all": {}})
    with pytest.raises(AuthorizationException):
        ingest.search(index=index, query={"match_all": {}})
    with pytest.raises(AuthorizationException):
        ingest.delete(index=hit["_index"], id=hit["_id"], routing=hit["_routing"])
    with pytest.raises(AuthorizationException):
        ingest.indices.delete(index=index)


def test_ingest_cannot_search_and_is_told_the_role(set_up: Secured) -> None:
    for command in (
        ["search", "--user", "ivy", "anything"],
        ["memory-search", "--user", "ivy", "anything"],
        ["show", "--user", "ivy", "--session", "s1"],
    ):
        result = set_up.run("ingest", *command)
        assert result.exit_code != 0, command
        assert "needs the recall role" in result.output, result.output
        assert "Traceback" not in result.output
    result = set_up.run("ingest", "delete", "--user", "ivy")
    assert result.exit_code == 3
    assert "admin role" in result.output


def test_ingest_follow_stores_with_the_ingest_role_and_names_the_enrich_role_once(
    set_up: Secured, tmp_path: Path
) -> None:
    """`ingest --follow` as a sidecar runs it: a real process, stopped by SIGTERM. Its
    enrichment alongside needs the enrich role, which the ingest one lacks: it says so
    once and tries again quietly, and every event is stored all the same."""
    source = write_ndjson(
        tmp_path / "follow.ndjson", [event(user="fay", session="s", event_id="f0")]
    )
    ckpt = tmp_path / "follow.ckpt"
    said = tmp_path / "follow.out"
    env = {k: v for k, v in {**os.environ, **set_up.env("ingest")}.items() if v is not None}
    with said.open("wb") as out:
        run = subprocess.Popen(
            [*CLI, "ingest", str(source), "--follow", "--checkpoint", str(ckpt)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        assert wait_until(lambda: _stored(set_up, "fay") == ["f0"], timeout=60)
        more = [event(user="fay", session="s", event_id=f"f{i}") for i in (1, 2)]
        append_ndjson(source, more)
        assert wait_until(lambda: _stored(set_up, "fay") == ["f0", "f1", "f2"], timeout=60)
        assert wait_until(lambda: checkpoint_offset(ckpt) == source.stat().st_size, timeout=30)
        # The enrichment alongside tries on its own schedule: wait for its word.
        assert wait_until(lambda: b"needs the enrich role" in said.read_bytes(), timeout=60)
    finally:
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=60)
    output = said.read_text(encoding="utf-8")
    set_up.outputs.append(output)
    assert run.returncode == 0, output
    assert output.strip().splitlines()[-1].startswith("Read 3, indexed 3"), output
    assert output.count("needs the enrich role") == 1, output


def test_tombstones_hold_for_the_ingest_role(set_up: Secured, tmp_path: Path) -> None:
    old = event(user="erased", session="s", event_id="old", timestamp="2024-03-01T10:00:00Z")
    assert _ingest(set_up, tmp_path, "ingest", old).exit_code == 0
    erased = set_up.run("admin", "delete", "--user", "erased")
    assert erased.exit_code == 0, erased.output
    replay = _ingest(set_up, tmp_path, "ingest", old)
    assert "indexed 0" in replay.output, replay.output
    assert _stored(set_up, "erased") == []


def test_recall_reads_and_may_change_nothing(set_up: Secured, tmp_path: Path) -> None:
    mine = event(user="rex", session="s1", event_id="r1", text="the lisbon offsite")
    assert _ingest(set_up, tmp_path, "ingest", mine).exit_code == 0
    set_up.client("admin").indices.refresh(index=ALIAS)
    found = set_up.run("recall", "search", "--user", "rex", "--format", "json", "lisbon")
    assert found.exit_code == 0, found.output
    assert "the lisbon offsite" in found.output
    memory = set_up.run("recall", "memory-search", "--user", "rex", "lisbon offsite")
    assert memory.exit_code == 0, memory.output
    assert "the lisbon offsite" in memory.output
    refusals = {
        "setup": (["setup"], "admin"),
        "ingest": (["ingest", str(write_ndjson(tmp_path / "r.ndjson", [mine]))], "ingest"),
        "delete": (["delete", "--user", "rex"], "admin"),
        "prune": (["prune", "--before", "2025-01-01", "--yes"], "admin"),
        "compact": (["compact"], "admin"),
    }
    for name, (command, role) in refusals.items():
        result = set_up.run("recall", *command)
        assert result.exit_code == 3, (name, result.output)
        assert f"{role} role" in result.output, (name, result.output)
        assert "Traceback" not in result.output
    recall = set_up.client("recall")
    index = f"{ALIAS}-2024.02"
    hit = _hits(set_up, "rex")[0]
    target = {"_index": index, "_id": "another", "routing": hit["_routing"]}
    with pytest.raises(AuthorizationException):  # a bulk at all, with no write privilege
        recall.bulk(operations=[{"create": target}, hit["_source"]])
    with pytest.raises(AuthorizationException):
        recall.index(index=index, id="another", routing=hit["_routing"], document={})
    with pytest.raises(AuthorizationException):
        recall.indices.put_index_template(name=ALIAS, index_patterns=["nothing-*"])
    assert _stored(set_up, "rex") == ["r1"]


def test_enrich_enriches_and_admin_runs_the_upkeep(set_up: Secured, tmp_path: Path) -> None:
    new = event(user="eve", session="s", event_id="n1", text="offsites in lisbon")
    assert _ingest(set_up, tmp_path, "ingest", new).exit_code == 0
    # Stored, but not yet searchable: a pass started at once might not see it, and would
    # leave it to the next one.
    assert _stored(set_up, "eve") == ["n1"]
    enriched = set_up.run("enrich", "embed")
    assert enriched.exit_code == 0, enriched.output
    assert wait_until(
        lambda: set_up.run("enrich", "embed", "--status").output.startswith("0 event(s)"),
        timeout=30,
    )
    for command in (
        ["embed", "--backfill"],
        ["migrate"],
        ["prune", "--before", "2024-03-01", "--yes"],
        ["compact"],
        ["delete", "--user", "eve"],
    ):
        result = set_up.run("admin", *command)
        assert result.exit_code == 0, (command, result.output)
    assert not set_up.client("admin").indices.exists(index=f"{ALIAS}-2024.02")


def test_serve_with_its_roles_stores_and_recalls_and_without_recall_says_so(
    set_up: Secured, tmp_path: Path
) -> None:
    def settings(role: str, **reads: str) -> Settings:
        return set_up.settings(role, tmp_path, **reads)

    posted = event(user="sam", session="s", event_id="h1", text="zeppelin tickets")
    tool = "/v1/users/sam/tools/cross_session_search"
    ask = {"innerThought": "t", "query": "zeppelin"}
    with TestClient(create_app(settings("serve"), enrich=True)) as web:
        stored = web.post("/v1/events?refresh=wait_for", json=posted)
        assert stored.status_code == 200, stored.text
        found = web.post(tool, json=ask)
        assert found.status_code == 200, found.text
        assert "zeppelin tickets" in found.text
        assert web.get("/readyz").status_code == 200
    # With the ingest role alone, serve stores, and a recall names the role it lacks.
    with TestClient(create_app(settings("ingest"), enrich=False)) as web:
        again = web.post("/v1/events", json={**posted, "event_id": "h2"})
        assert again.status_code == 200, again.text
        refused = web.post(tool, json=ask)
        assert refused.status_code == 500, refused.text
        assert "needs the recall role" in refused.text
        assert set_up.passwords["ingest"] not in refused.text
    # Two credentials kept apart: writes with ingest's, searches and probes with recall's.
    apart = settings(
        "ingest",
        SESSION_RECALL_READ_USERNAME=set_up.user("recall"),
        SESSION_RECALL_READ_PASSWORD=set_up.passwords["recall"],
    )
    with TestClient(create_app(apart, enrich=False)) as web:
        third = web.post("/v1/events?refresh=wait_for", json={**posted, "event_id": "h3"})
        assert third.status_code == 200, third.text
        assert web.get("/readyz").status_code == 200
        found = web.post(tool, json=ask)
        assert found.status_code == 200, found.text
        assert found.text.count("zeppelin tickets") == 3
    assert _stored(set_up, "sam") == ["h1", "h2", "h3"]


def _narrowed_ingest(secured: Secured, name: str, without: str, kept_on: str | None = None) -> None:
    """The user `tier-<name>`, with the ingest role less `without` as an operator
    might narrow it (but on the index `kept_on`); its password goes with the others.
    Returns once it is in force."""
    _narrowed(secured, name, "ingest", [without], kept_on=kept_on)


def _narrowed(
    secured: Secured,
    name: str,
    role: Role,
    without: list[str],
    *,
    adding: tuple[str, ...] = (),
    kept_on: str | None = None,
    held: str = "indices:admin/aliases/get",
) -> None:
    """The user `tier-<name>` with `role` less the privileges `without` and plus those
    `adding` (but `without` on the index `kept_on`). Returns once it is in force: on a
    partition, `held` is granted and the first of `without` is not."""
    config = secured.node.node_dir / "config"
    secured.passwords[name] = FileRealm([config]).create(f"tier-{name}", (role,), name)
    narrowed = descriptor(ALIAS, role)
    for grant in narrowed["indices"]:
        grant["privileges"] = [p for p in grant["privileges"] if p not in without] + [*adding]
    if kept_on is not None:
        narrowed["indices"].append({"names": [kept_on], "privileges": without})
    roles_file = config / "roles.yml"
    defined = yaml.safe_load(roles_file.read_text())
    roles_file.write_text(yaml.safe_dump({**defined, f"{name}-{role}": narrowed}))
    client = secured.client(name)
    partition = f"{ALIAS}-2000.01"
    refused = without[0]

    def in_force() -> bool:
        try:
            answer = client.security.has_privileges(
                index=[{"names": [partition], "privileges": [held, refused]}]
            )
        except Exception:
            return False
        granted = answer["index"][partition]
        return bool(granted[held]) and not granted[refused]

    assert wait_until(in_force, timeout=60)


def test_without_auto_configure_a_new_month_is_refused_and_the_others_are_stored(
    set_up: Secured, tmp_path: Path
) -> None:
    """An ingest role narrowed by an operator (no `auto_configure`, so no partition
    of its making: it has no `create_index` either): serve refuses the events of a
    month without a partition, naming the action, and stores the rest."""
    _narrowed_ingest(set_up, "narrow", without="auto_configure")
    new_month = f"{ALIAS}-2023.05"
    settings = set_up.settings("narrow", tmp_path)
    old = event(user="nia", session="s", event_id="m1", timestamp="2023-05-02T10:00:00Z")
    known = event(user="nia", session="s", event_id="m2")  # 2024.02 exists
    with TestClient(create_app(settings, enrich=False)) as web:
        refused = web.post("/v1/events", json=old)
        stored = web.post("/v1/events", json=known)
    assert refused.status_code == 422, refused.text
    [result] = refused.json()["results"]
    assert result["status"] == "rejected"
    assert "(403)" in result["reason"] and "indices:admin/auto_create" in result["reason"]
    assert stored.status_code == 200, stored.text
    assert _stored(set_up, "nia") == ["m2"]
    assert not set_up.client("admin").indices.exists(index=new_month)
    # `ingest` stops there instead: the event is not bad input, so it is not
    # dead-lettered, and the checkpoint stays before it for a run with a credential
    # that holds the privilege. The events of its chunk bound for existing partitions
    # are stored, and met again (not twice) when it resumes.
    later = event(user="nia", session="s", event_id="m3")
    source = write_ndjson(tmp_path / "narrow.ndjson", [old, later])
    ckpt, dead = tmp_path / "narrow.ckpt", tmp_path / "narrow.dead"
    keep = ["--checkpoint", str(ckpt), "--dead-letter", str(dead), "--no-enrich"]
    stopped = set_up.run("narrow", "ingest", str(source), *keep)
    assert stopped.exit_code == 3, stopped.output
    assert "store the event 'm1'" in stopped.output and "auto_create" in stopped.output
    assert "needs the ingest role" in stopped.output and "resume" in stopped.output
    assert not dead.exists()
    assert _stored(set_up, "nia") == ["m2", "m3"]
    resumed = set_up.run("ingest", "ingest", str(source), *keep)
    assert resumed.exit_code == 0, resumed.output
    assert resumed.output.startswith("Read 2, indexed 1, already present 1"), resumed.output
    assert _stored(set_up, "nia") == ["m1", "m2", "m3"]


def test_a_bulk_item_refused_for_a_privilege_is_reported_never_retried_nor_dead_lettered(
    set_up: Secured, tmp_path: Path
) -> None:
    """With `create_doc` on another index only, the bulk request is let through and
    the item is refused with 403: serve answers with the refusal at once, ingest stops
    with the role needed and its checkpoint before the event."""
    _narrowed_ingest(set_up, "nocreate", without="create_doc", kept_on=f"{ALIAS}-2099.01")
    refused = event(user="noa", session="s", event_id="n1")  # 2024.02 exists
    with TestClient(create_app(set_up.settings("nocreate", tmp_path), enrich=False)) as web:
        answer = web.post("/v1/events", json=refused)
    assert answer.status_code == 422, answer.text
    [result] = answer.json()["results"]
    assert result["status"] == "rejected"
    assert "(403)" in result["reason"] and "security_exception" in result["reason"]
    source = write_ndjson(tmp_path / "nocreate.ndjson", [refused])
    ckpt, dead = tmp_path / "nocreate.ckpt", tmp_path / "nocreate.dead"
    keep = ["--checkpoint", str(ckpt), "--dead-letter", str(dead), "--no-enrich"]
    stopped = set_up.run("nocreate", "ingest", str(source), *keep)
    assert stopped.exit_code == 3, stopped.output
    assert "store the event 'n1'" in stopped.output and "(403)" in stopped.output
    assert "needs the ingest role" in stopped.output
    assert not dead.exists()
    assert checkpoint_offset(ckpt) == 0
    assert _stored(set_up, "noa") == []


def test_a_recall_role_that_may_not_list_the_partitions_pages_without_them(
    set_up: Secured, tmp_path: Path
) -> None:
    """A recall role narrowed to the search actions: no `_field_caps` (which `read` and
    `view_index_metadata` both allow). Recall's partition map meets the node's own 403
    and gives no windows; every page is found all the same, by one search each."""
    search = ("indices:data/read/search", "indices:data/read/msearch")
    _narrowed(set_up, "nocaps", "recall", ["read", "view_index_metadata"], adding=search,
              held=search[0])  # fmt: skip
    client = set_up.client("nocaps")
    with pytest.raises(AuthorizationException, match="indices:data/read/field_caps"):
        client.field_caps(index=ALIAS, fields="timestamp")
    months = [event(user="fay", session="s", event_id=f"f{m}", text="the harbour ferry",
                    timestamp=f"2024-0{m}-10T10:00:00Z") for m in (1, 2, 3)]  # fmt: skip
    assert _ingest(set_up, tmp_path, "ingest", *months).exit_code == 0
    set_up.client("admin").indices.refresh(index=ALIAS)

    assert PartitionMap(client, ALIAS).window_ends(None) == []
    searcher = CrossSessionSearcher(client, alias=ALIAS, user_id="fay", cursor_key=KEY, page_size=2)
    assert served(searcher, "ferry") == ["f1", "f2", "f3"]


def test_the_mcp_tools_recall_with_the_recall_role_and_name_it_without(
    set_up: Secured, tmp_path: Path
) -> None:
    """`session-recall mcp` over stdio, as an agent runs it: with the recall role its
    tools answer; with the ingest role the tool's error names the role it needs."""
    mine = event(user="tom", session="s1", event_id="t1", text="the harbour ferry schedule")
    assert _ingest(set_up, tmp_path, "ingest", mine).exit_code == 0
    assert _stored(set_up, "tom") == ["t1"]
    executable = shutil.which("session-recall")
    assert executable, "the session-recall console script is not installed"

    def server(role: str) -> StdioServerParameters:
        return StdioServerParameters(
            command=executable,
            args=["mcp", "--user", "tom"],
            env={
                "ELASTICSEARCH_URL": set_up.url,
                "ELASTICSEARCH_USERNAME": set_up.user(role),
                "ELASTICSEARCH_PASSWORD": set_up.passwords[role],
                "ELASTICSEARCH_CA_CERTS": str(set_up.ca),
                "SESSION_RECALL_INDEX": ALIAS,
                "SESSION_RECALL_HOME": str(tmp_path),
                "PATH": os.environ.get("PATH", ""),
            },
        )

    ask = {"innerThought": "t", "query": "ferry schedule"}
    calls = [("cross_session_search", ask), ("memory_search", ask)]
    _, answers = anyio.run(_session_calls, server("recall"), calls)
    for answer in answers:
        assert not answer.is_error, _text(answer)
        assert "the harbour ferry schedule" in _text(answer)
    _, refused = anyio.run(_session_calls, server("ingest"), calls)
    for answer in refused:
        assert answer.is_error
        assert "needs the recall role" in _text(answer), _text(answer)
        set_up.outputs.append(_text(answer))


def test_users_made_on_the_command_line_work_at_once_and_go_when_deleted(
    secured: Secured,
) -> None:
    def users(*args: str) -> Result:
        env = {"SESSION_RECALL_HOME": str(home_for_tests()), "SESSION_RECALL_INDEX": ALIAS}
        return CliRunner().invoke(main, ["users", *args, "--node", NODE], env=env)

    made = users("create", "--role", "recall", "--name", "cli-reader")
    assert made.exit_code == 0, made.output
    lines = dict(line.split("=", 1) for line in made.stdout.splitlines())
    reader = Elasticsearch(
        secured.url,
        basic_auth=(lines["ELASTICSEARCH_USERNAME"], lines["ELASTICSEARCH_PASSWORD"]),
        ca_certs=str(secured.ca),
    )
    assert wait_until(lambda: authenticates(reader), timeout=60)
    assert "cli-reader: secured-tier-recall" in users("list").output
    twice = users("create", "--role", "admin", "--name", "cli-reader")
    assert twice.exit_code == 3
    assert "exists" in twice.output
    assert users("delete", "cli-reader").exit_code == 0
    assert wait_until(lambda: not authenticates(reader), timeout=60)
    # The node's roles are what `roles show --format file` prints.
    shown = CliRunner().invoke(main, ["--index", ALIAS, "roles", "show", "--format", "file"])
    on_node = yaml.safe_load((secured.node.node_dir / "config" / "roles.yml").read_text())
    mine = {name: role for name, role in on_node.items() if name.startswith(f"{ALIAS}-")}
    assert yaml.safe_load(shown.stdout) == mine


def test_next_steps_name_the_node_and_the_alias(secured: Secured) -> None:
    """`node start --name N --secure` said `users create --role ROLE`, which then looked
    for the node 'default'; the hints of `users` forgot the node too."""
    home = str(home_for_tests())
    for_alias = ["--home", home, "--index", ALIAS]
    # Without --secure: the node records its own secrets (the fixture's), which a start
    # with --secure would replace by those of the home, restarting the node.
    started = CliRunner().invoke(main, [*for_alias, "node", "start", "--name", NODE])
    assert started.exit_code == 0, started.output
    said = f"session-recall --home {home} --index {ALIAS} users create --role ROLE --node {NODE}"
    assert said in started.stderr, started.stderr
    gone = CliRunner().invoke(main, [*for_alias, "users", "delete", "nobody", "--node", NODE])
    assert gone.exit_code == 3, gone.output
    assert f"`session-recall --home {home} --index {ALIAS} users list --node {NODE}`" in gone.stderr
    plain = CliRunner().invoke(main, ["--home", home, "users", "list", "--node", "tests"])
    assert plain.exit_code == 3, plain.output
    assert f"`session-recall --home {home} node start --secure --name tests`" in plain.stderr
    taken = CliRunner().invoke(
        main,
        [
            *for_alias,
            "users",
            "create",
            "--role",
            "recall",
            "--name",
            "tier-recall",
            "--node",
            NODE,
        ],
    )
    assert taken.exit_code == 3, taken.output
    assert (
        f"`session-recall --home {home} --index {ALIAS} users delete tier-recall --node {NODE}`"
        in taken.stderr
    )


@pytest.mark.parametrize("length", [118, 200])
def test_a_long_alias_gets_roles_that_load_and_work(secured: Secured, length: int) -> None:
    """roles.yml once held a role name of 128 characters or more in YAML's `? key` form:
    Elasticsearch skipped the role ("invalid role definition"), and `setup` got 403."""
    alias = f"long_{length}_".ljust(length, "x")
    env = {"SESSION_RECALL_HOME": str(home_for_tests()), "SESSION_RECALL_INDEX": alias}
    name = f"long-admin-{length}"
    made = CliRunner().invoke(
        main, ["users", "create", "--role", "admin", "--name", name, "--node", NODE], env=env
    )
    assert made.exit_code == 0, made.output
    lines = dict(line.split("=", 1) for line in made.stdout.splitlines())
    admin = Elasticsearch(
        secured.url,
        basic_auth=(lines["ELASTICSEARCH_USERNAME"], lines["ELASTICSEARCH_PASSWORD"]),
        ca_certs=str(secured.ca),
    )
    assert wait_until(lambda: authenticates(admin, alias), timeout=60), (
        secured.node.node_dir / "config" / "roles.yml"
    ).read_text()[-2000:]
    user_env = {
        **secured.env("admin"),
        "ELASTICSEARCH_USERNAME": lines["ELASTICSEARCH_USERNAME"],
        "ELASTICSEARCH_PASSWORD": lines["ELASTICSEARCH_PASSWORD"],
        "SESSION_RECALL_INDEX": alias,
    }
    set_up = CliRunner().invoke(main, ["setup"], env=user_env)
    assert set_up.exit_code == 0, set_up.output
    assert admin.indices.exists_alias(name=alias)


def test_no_output_or_log_shows_a_password(
    secured: Secured, caplog: pytest.LogCaptureFixture
) -> None:
    """Last in the module: every command of the tier has run (with the client's own
    DEBUG logging for this one)."""
    caplog.set_level(logging.DEBUG)
    secured.run("recall", "search", "--user", "u", "x")
    secured.run("ingest", "search", "--user", "u", "x")
    logs = secured.node.node_dir / "logs"
    texts = [*secured.outputs, caplog.text]
    texts += [p.read_text(errors="replace") for p in logs.glob("*.log") if p.is_file()]
    secrets = [*secured.passwords.values(), Security(secured.ca.parent).password()]
    assert len(secured.outputs) > 15
    for secret in secrets:
        leaked = [text[:200] for text in texts if secret in text]
        assert not leaked, leaked
