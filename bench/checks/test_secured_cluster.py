"""`session-recall node start --nodes 2 --secure` as an operator runs it: the nodes
form a cluster over TLS, `users create` reaches both, and each role's credential
works through either node over verified HTTPS."""

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from elasticsearch import AuthorizationException, Elasticsearch

from session_recall.cli import main
from session_recall.node import LocalCluster, wait_until
from session_recall.node.secure import Security
from tests.support.elasticsearch import authenticates, home_for_tests
from tests.support.ndjson import write_ndjson

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ALIAS = "secured-pair"


def _cli(*args: str, **env: str | None) -> Result:
    return CliRunner().invoke(
        main, list(args), env={"SESSION_RECALL_HOME": str(home_for_tests()), **env}
    )


@pytest.fixture(scope="module")
def started() -> Iterator[tuple[str, str]]:
    """The cluster's name and its URLs, as `node start` printed them."""
    name = f"t{uuid.uuid4().hex[:6]}-sec"
    cluster = LocalCluster(home=home_for_tests(), name=name, nodes=2)
    try:
        result = _cli("node", "start", "--name", name, "--nodes", "2", "--secure")
        assert result.exit_code == 0, result.output
        yield name, result.output.strip().splitlines()[-1]
    finally:
        cluster.wipe()
        shutil.rmtree(home_for_tests() / "security" / name, ignore_errors=True)


def _pair_formed(client: Elasticsearch) -> bool:
    try:
        health = client.cluster.health(wait_for_nodes="2", timeout="30s")
    except AuthorizationException:
        return False
    return bool(health["number_of_nodes"] == 2)


def _credentials(name: str, role: str) -> dict[str, str]:
    made = _cli("users", "create", "--role", role, "--name", f"pair-{role}", "--node", name,
                SESSION_RECALL_INDEX=ALIAS)  # fmt: skip
    assert made.exit_code == 0, made.output
    lines = [line.partition("=") for line in made.output.splitlines() if "=" in line]
    return {key: value for key, _, value in lines}


def test_a_secured_pair_forms_over_tls_and_each_role_works_through_either_node(
    started: tuple[str, str], tmp_path: Path
) -> None:
    name, urls = started
    assert urls.count("https://") == 2, urls
    ca = home_for_tests() / "security" / name / "ca.crt"
    bootstrap = Security(ca.parent).password()
    admin, ingest, recall = (_credentials(name, role) for role in ("admin", "ingest", "recall"))

    def run(credentials: dict[str, str], *args: str) -> Result:
        env = {"ELASTICSEARCH_URL": urls, "ELASTICSEARCH_CA_CERTS": str(ca)}
        return _cli(*args, **env, ELASTICSEARCH_API_KEY=None, SESSION_RECALL_INDEX=ALIAS,
                    **credentials)  # fmt: skip

    for url in urls.split(","):  # every node takes the users, over verified TLS
        for credentials in (ingest, recall, admin):
            client = Elasticsearch(url, ca_certs=str(ca), basic_auth=(
                credentials["ELASTICSEARCH_USERNAME"], credentials["ELASTICSEARCH_PASSWORD"]
            ))  # fmt: skip
            assert wait_until(lambda c=client: authenticates(c, ALIAS), timeout=60), url
        # The cluster's health and settings are no role's business: the bootstrap
        # user's, whose password the launcher keeps.
        superuser = Elasticsearch(url, ca_certs=str(ca), basic_auth=("elastic", bootstrap))
        assert wait_until(lambda c=superuser: _pair_formed(c), timeout=60), url
        settings = superuser.nodes.info(node_id="_local", metric="settings")["nodes"]
        [node] = settings.values()
        transport = node["settings"]["xpack"]["security"]["transport"]["ssl"]
        assert transport["enabled"] == "true"
    assert run(admin, "setup").exit_code == 0
    source = write_ndjson(
        tmp_path / "pair.ndjson",
        [{"user_id": "pia", "session_id": "s", "event_id": "p1", "type": "user_message",
          "timestamp": "2024-02-10T10:00:00Z", "text": "the lighthouse keeper's log"}],
    )  # fmt: skip
    stored = run(ingest, "ingest", str(source), "--no-enrich")
    assert stored.exit_code == 0, stored.output
    found = run(recall, "search", "--user", "pia", "lighthouse")
    assert found.exit_code == 0, found.output
    assert "the lighthouse keeper's log" in found.output
    refused = run(recall, "delete", "--user", "pia")
    assert refused.exit_code == 3 and "needs the admin role" in refused.output, refused.output
    for credentials in (admin, ingest, recall):
        assert credentials["ELASTICSEARCH_PASSWORD"] not in stored.output + found.output
