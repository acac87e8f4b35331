"""Never a silent short page: on a 2-node cluster without replicas, one node killed,
a user whose shard was there gets "unavailable" on every surface (tool line, HTTP 503
with Retry-After, CLI exit 1), and every other user still gets their whole page."""

import os
import signal
import uuid
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.indexer import Event, Submission, Writer
from session_recall.node import LocalCluster, wait_until
from session_recall.templates import install
from session_recall.tools import cross_session_tool
from session_recall.tools.searchers import searchers_for
from tests.support.elasticsearch import dedicated_cluster, home_for_tests, server_pid

pytestmark = [pytest.mark.integration, pytest.mark.slow]

USERS = [f"user-{n}" for n in range(8)]
PER_USER = 12
ALIAS = "t-no-partial"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with dedicated_cluster(2, prefix=f"t{uuid.uuid4().hex[:6]}-two") as made:
        yield made


def _events() -> list[Event]:
    return [
        Event(
            event_id=f"{user}-{n}",
            user_id=user,
            session_id="s",
            timestamp=f"2026-0{5 + n % 2}-{1 + n:02d}T10:00:00Z",
            type="user_message",
            text=f"we decided {n}",
        )
        for user in USERS
        for n in range(PER_USER)
    ]


def test_a_missing_shard_is_unavailable_never_a_short_page(cluster: LocalCluster):
    urls = ",".join(cluster.urls())
    settings = Settings(
        ELASTICSEARCH_URL=urls, SESSION_RECALL_INDEX=ALIAS, SESSION_RECALL_HOME=home_for_tests()
    )
    es = make_client(settings)
    install(es, ALIAS, shards=2, replicas=0)
    assert all(w.result.stored for w in Writer(es, ALIAS).write(map(Submission, _events())))
    es.indices.refresh(index=ALIAS)
    es.cluster.health(index=ALIAS, wait_for_status="green", timeout="60s")
    master = es.cat.master(format="json").body[0]["node"]
    (victim,) = [node.name for node in cluster.nodes if node.name != master]
    # Whose events have a shard on the victim: their pages would come back short.
    hit = {
        user
        for user in USERS
        for group in es.search_shards(index=ALIAS, routing=user).body["shards"]
        for copy in group
        if copy["node"] in _node_ids(es, victim)
    }
    assert hit and set(USERS) - hit, "the shards should sit on both nodes"

    status = _node_cli("status", cluster.name)
    assert status.exit_code == 0, status.output
    assert sorted(line.split()[0] for line in status.output.splitlines()) == [
        node.name for node in cluster.nodes
    ]

    os.kill(server_pid(es, victim), signal.SIGKILL)
    assert wait_until(lambda: _nodes(es) == 1, timeout=120)
    status = _node_cli("status", cluster.name)
    assert status.exit_code == 1 and f"{victim} not running" in status.output, status.output

    searchers = searchers_for(es, settings)
    with TestClient(create_app(settings)) as web:
        for user in USERS:
            tool = cross_session_tool(searchers.cross_session(user_id=user, page_size=50))
            answer = tool.call({"innerThought": "t", "query": "we decided"})
            over_http = web.post(
                f"/v1/users/{user}/tools/cross_session_search",
                json={"innerThought": "t", "query": "we decided"},
            )
            cli = CliRunner().invoke(
                main,
                ["--es-url", urls, "--index", ALIAS, "search", "--user", user, "we decided"],
            )
            if user in hit:
                assert answer.is_error and "Retry in a few seconds" in answer.text, answer.text
                assert over_http.status_code == 503, over_http.text
                assert int(over_http.headers["retry-after"]) > 0
                assert cli.exit_code == 1, cli.output
            else:
                assert not answer.is_error, answer.text
                assert answer.text.count("we decided") == PER_USER
                assert over_http.status_code == 200, over_http.text
                assert cli.exit_code == 0, cli.output
    es.close()
    stopped = _node_cli("stop", cluster.name)
    assert stopped.output.strip() == "Stopped 1 of 2 nodes.", stopped.output


def _node_cli(command: str, name: str):
    return CliRunner().invoke(
        main, ["--home", str(home_for_tests()), "node", command, "--name", name]
    )


def _node_ids(es: Elasticsearch, name: str) -> set[str]:
    found = es.nodes.info(node_id=name, metric="_none").body["nodes"]
    return set(found)


def _nodes(es: Elasticsearch) -> int:
    try:
        return int(es.cluster.health(timeout="1s").body["number_of_nodes"])
    except Exception:  # the victim's URL may be tried first; the next poll asks again
        return -1
