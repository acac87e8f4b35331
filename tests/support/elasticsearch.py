"""Provides a real Elasticsearch for the suite, in this order:

1. `ELASTICSEARCH_URL`, when set;
2. testcontainers with the official image at the pinned version, when a Docker engine
   answers;
3. the project's own local node (`session-recall node start`), named "tests".
"""

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from elasticsearch import Elasticsearch

from session_recall.node import LocalNode, NodeInfo
from session_recall.node.cluster import LocalCluster
from session_recall.pins import elasticsearch_version

REPO = Path(__file__).resolve().parents[2]


def home_for_tests() -> Path:
    """Local state for tests: the git-ignored .cache of this checkout, unless overridden."""
    return Path(os.environ.get("SESSION_RECALL_HOME", REPO / ".cache"))


@dataclass(frozen=True)
class Provided:
    url: str
    source: str


def docker_engine_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=15).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@contextmanager
def provide_elasticsearch() -> Iterator[Provided]:
    url = os.environ.get("ELASTICSEARCH_URL")
    if url:
        yield Provided(url=url, source="ELASTICSEARCH_URL")
        return
    if docker_engine_answers():
        from testcontainers.elasticsearch import ElasticSearchContainer

        image = f"elasticsearch:{elasticsearch_version()}"
        with ElasticSearchContainer(image, mem_limit="1g") as container:
            host = container.get_container_host_ip()
            port = container.get_exposed_port(9200)
            yield Provided(url=f"http://{host}:{port}", source=f"testcontainers ({image})")
        return
    node = LocalNode(home=home_for_tests(), name="tests")
    already_running = node.status() is not None
    info = node.start()
    try:
        yield Provided(url=info.url, source=f"local node {info.name!r} ({node.node_dir})")
    finally:
        if not already_running and not os.environ.get("SESSION_RECALL_KEEP_NODE"):
            node.stop()


class DedicatedNodes:
    """Start, stop and restart nodes of a test's own, for fault injection."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._nodes: dict[str, LocalNode] = {}

    def node(self, name: str = "fault", **settings: str) -> LocalNode:
        full = f"{self._prefix}-{name}"
        if full not in self._nodes:
            self._nodes[full] = LocalNode(home=home_for_tests(), name=full, settings=settings)
        return self._nodes[full]

    def start(self, name: str = "fault", **settings: str) -> NodeInfo:
        return self.node(name, **settings).start()

    def close(self) -> None:
        for node in self._nodes.values():
            node.wipe()


@contextmanager
def dedicated_cluster(nodes: int, *, prefix: str) -> Iterator[LocalCluster]:
    """A local cluster of the test module's own (heap 512m a node), wiped afterwards.
    Expensive on a small machine: one per module, shared by its tests."""
    cluster = LocalCluster(home=home_for_tests(), name=prefix, nodes=nodes)
    try:
        cluster.start(on_step=lambda _m: None)
        yield cluster
    finally:
        cluster.wipe()


def server_pid(client: Elasticsearch, node_name: str) -> int:
    """The pid of a node's server JVM, as the node reports it."""
    found = client.nodes.info(node_id=node_name, metric="process").body["nodes"]
    (info,) = found.values()
    return int(info["process"]["id"])


def authenticates(client: Elasticsearch, alias: str | None = None) -> bool:
    """The credentials of `client` are taken, and with `alias` its roles of that alias
    are in force (every role may read the alias's aliases): a file-realm user and its
    role are, once the node read its users' and roles' files again (it looks every few
    seconds, at each file on its own)."""
    try:
        if alias is None:
            client.security.authenticate()
            return True
        names = {"names": [alias], "privileges": ["indices:admin/aliases/get"]}
        return bool(client.security.has_privileges(index=[names])["has_all_requested"])
    except Exception:
        return False
