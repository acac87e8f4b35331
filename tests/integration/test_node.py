"""The local node launcher, on one dedicated node that the module's tests share.

The node starts once, through the CLI and with an extra setting. The tests follow its
life in file order, the last one stops it; run alone, a test starts it again first.
"""

import os
import signal
import uuid
from collections.abc import Iterator

import pytest
from click.testing import CliRunner, Result
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.node import LocalNode, NodeInfo, wait_until
from session_recall.node.local_node import group_members
from tests.support.elasticsearch import DedicatedNodes, home_for_tests

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SETTINGS = {"thread_pool.write.queue_size": "3"}


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, ["--home", str(home_for_tests()), "node", *args])


@pytest.fixture(scope="module")
def nodes() -> Iterator[DedicatedNodes]:
    nodes = DedicatedNodes(prefix=f"t{uuid.uuid4().hex[:6]}")
    yield nodes
    nodes.close()


@pytest.fixture
def node(nodes: DedicatedNodes) -> LocalNode:
    """The module's node (not started by this fixture)."""
    return nodes.node("launcher", **SETTINGS)


@pytest.fixture
def running(node: LocalNode) -> NodeInfo:
    """The module's node, running: started here only when a test runs out of order."""
    return node.start()


def test_status_exits_1_for_a_node_that_never_started(nodes: DedicatedNodes):
    never = nodes.node("never")
    status = _cli("status", "--name", never.name)
    assert status.exit_code == 1, status.output
    assert never.status() is None
    # It names the node, its folder, and the start of that node in that home.
    home = home_for_tests()
    assert f"The node {never.name!r} is not running (its folder: {never.node_dir})" in status.output
    assert f"session-recall --home {home} node start --name {never.name}" in status.output


def test_start_prints_the_url_and_status_repeats_it(node: LocalNode):
    settings = [f"-E{key}={value}" for key, value in SETTINGS.items()]
    started = _cli("start", "--name", node.name, *settings)
    assert started.exit_code == 0, started.output
    url = started.output.strip().splitlines()[-1]
    assert url.startswith("http://127.0.0.1:")

    running = _cli("status", "--name", node.name)
    assert running.exit_code == 0, running.output
    assert running.output.strip() == url


def test_extra_settings_reach_the_node(running: NodeInfo):
    client = Elasticsearch(running.url)
    pools = client.nodes.info(metric="thread_pool").body["nodes"]
    (info,) = pools.values()
    assert info["thread_pool"]["write"]["queue_size"] == 3
    client.close()


def test_starting_a_running_node_again_reuses_it(node: LocalNode, running: NodeInfo):
    members = group_members(running.pgid)
    assert members, "the node's process group should have live processes"

    again = node.start()
    from_the_cli = _cli("start", "--name", node.name)

    assert again == running
    assert from_the_cli.exit_code == 0, from_the_cli.output
    assert from_the_cli.output.strip().splitlines()[-1] == running.url
    assert group_members(running.pgid) == members, "a second start must not spawn processes"


def test_a_node_killed_and_started_again_keeps_its_url(node: LocalNode, running: NodeInfo):
    os.killpg(running.pgid, signal.SIGKILL)  # a crash: no clean shutdown, state left behind
    assert wait_until(lambda: group_members(running.pgid) == [], timeout=60)
    assert node.status() is None

    again = node.start()

    assert again.pgid != running.pgid
    assert again.url == running.url, "a configured ELASTICSEARCH_URL would no longer reach it"
    client = Elasticsearch(again.url)
    assert client.cluster.health()["status"] in ("green", "yellow")
    client.close()


# Last: it stops the module's node.
def test_stop_leaves_no_process_and_status_follows(node: LocalNode, running: NodeInfo):
    stopped = _cli("stop", "--name", node.name)

    assert stopped.exit_code == 0, stopped.output
    assert stopped.output.strip() == "Stopped."
    assert group_members(running.pgid) == []
    assert node.status() is None
    assert node.stop() is False
    status = _cli("status", "--name", node.name)
    assert status.exit_code == 1, status.output
    again = _cli("stop", "--name", node.name)
    assert (again.exit_code, again.output.strip()) == (
        0,
        f"The node {node.name!r} was not running.",
    )
