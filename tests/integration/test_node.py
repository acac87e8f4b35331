"""The local node launcher, on dedicated nodes of the test's own."""

import os
import signal

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.node import wait_until
from session_recall.node.local_node import group_members
from tests.support.elasticsearch import DedicatedNodes, home_for_tests

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_start_twice_gives_one_node_and_stop_leaves_no_process(dedicated_nodes: DedicatedNodes):
    node = dedicated_nodes.node("twice")
    first = node.start()
    members = group_members(first.pgid)
    assert members, "the node's process group should have live processes"

    second = node.start()

    assert second == first
    assert group_members(first.pgid) == members, "a second start must not spawn processes"
    assert node.stop() is True
    assert group_members(first.pgid) == []
    assert node.status() is None
    assert node.stop() is False


def test_extra_settings_reach_the_node(dedicated_nodes: DedicatedNodes):
    info = dedicated_nodes.start("tiny-queue", **{"thread_pool.write.queue_size": "3"})
    client = Elasticsearch(info.url)
    pools = client.nodes.info(metric="thread_pool").body["nodes"]
    (node,) = pools.values()
    assert node["thread_pool"]["write"]["queue_size"] == 3
    client.close()


def test_status_exit_code_follows_the_node(dedicated_nodes: DedicatedNodes):
    runner = CliRunner()
    node = dedicated_nodes.node("status")
    args = ["--home", str(home_for_tests()), "node"]

    stopped = runner.invoke(main, [*args, "status", "--name", node.name])
    assert stopped.exit_code == 1, stopped.output

    started = runner.invoke(main, [*args, "start", "--name", node.name])
    assert started.exit_code == 0, started.output
    url = started.output.strip().splitlines()[-1]
    assert url.startswith("http://127.0.0.1:")

    running = runner.invoke(main, [*args, "status", "--name", node.name])
    assert running.exit_code == 0, running.output
    assert running.output.strip() == url

    assert runner.invoke(main, [*args, "stop", "--name", node.name]).exit_code == 0
    assert runner.invoke(main, [*args, "status", "--name", node.name]).exit_code == 1


def test_a_node_killed_and_started_again_keeps_its_url(dedicated_nodes: DedicatedNodes):
    node = dedicated_nodes.node("crash")
    first = node.start()
    os.killpg(first.pgid, signal.SIGKILL)  # a crash: no clean shutdown, state left behind
    assert wait_until(lambda: group_members(first.pgid) == [], timeout=60)
    assert node.status() is None

    second = node.start()

    assert second.pgid != first.pgid
    assert second.url == first.url, "a configured ELASTICSEARCH_URL would no longer reach it"
    assert Elasticsearch(second.url).cluster.health()["status"] in ("green", "yellow")
