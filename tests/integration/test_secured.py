"""The product on a secured node: HTTPS with the node's own CA, and each command run
with the credential of its role only (`roles.json`). What each role may not do is
refused by Elasticsearch itself, and the CLI says which role the work needs; what it
may do works as on an open node. No output or log of the tier shows a password."""

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from elasticsearch import AuthorizationException, Elasticsearch

from session_recall.cli import main
from session_recall.core.access import ROLES, Role
from session_recall.node import LocalNode, wait_until
from session_recall.node.secure import Security
from session_recall.node.users import FileRealm
from tests.support.elasticsearch import home_for_tests
from tests.support.ndjson import write_ndjson

pytestmark = pytest.mark.integration

ALIAS = "secured-tier"
NODE = "tests-secured"


@dataclass
class Secured:
    url: str
    ca: Path
    passwords: dict[Role, str]
    home: Path
    node: LocalNode
    outputs: list[str]

    def user(self, role: Role) -> str:
        return f"tier-{role}"

    def client(self, role: Role) -> Elasticsearch:
        return Elasticsearch(
            self.url, basic_auth=(self.user(role), self.passwords[role]), ca_certs=str(self.ca)
        )

    def run(self, role: Role, *args: str, ca: Path | None = None, stdin: str = "") -> Result:
        env = {
            "ELASTICSEARCH_URL": self.url,
            "ELASTICSEARCH_USERNAME": self.user(role),
            "ELASTICSEARCH_PASSWORD": self.passwords[role],
            "ELASTICSEARCH_CA_CERTS": str(ca or self.ca),
            "ELASTICSEARCH_API_KEY": None,
            "SESSION_RECALL_INDEX": ALIAS,
            "SESSION_RECALL_HOME": str(self.home),
        }
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
    passwords = {role: realm.create(f"tier-{role}", (role,), ALIAS) for role in ROLES}
    found = Secured(
        url=info.url,
        ca=security.ca,
        passwords=passwords,
        home=tmp_path_factory.mktemp("home"),
        node=node,
        outputs=[],
    )
    for role in ROLES:  # the node reads its users' file again within seconds
        client = found.client(role)
        assert wait_until(lambda c=client: _authenticates(c), timeout=60), role
    try:
        yield found
    finally:
        node.wipe()


def _authenticates(client: Elasticsearch) -> bool:
    try:
        client.security.authenticate()
    except Exception:
        return False
    return True


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
    enriched = set_up.run("enrich", "embed")
    assert enriched.exit_code == 0, enriched.output
    # The enrich role may not refresh: what it did shows within the refresh interval.
    assert wait_until(
        lambda: set_up.run("enrich", "embed", "--status").output.startswith("0 event(s)"),
        timeout=30,
    )
    for command in (
        ["embed", "--backfill"],
        ["migrate"],
        ["prune", "--before", "2024-03-01", "--yes"],
        ["delete", "--user", "eve"],
    ):
        result = set_up.run("admin", *command)
        assert result.exit_code == 0, (command, result.output)
    assert not set_up.client("admin").indices.exists(index=f"{ALIAS}-2024.02")


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
