"""A local cluster of several nodes of the same distribution, as Elastic's own test
clusters run one: each node a `LocalNode` with its own folder (config, data, logs,
ports), discovering the others through file-based seed hosts.

The nodes of cluster `NAME` are `NAME-1`, `NAME-2`... Each node's
`config/unicast_hosts.txt` lists every node's transport address; Elasticsearch reads
it again on each discovery round, so on the first start the nodes are all spawned,
their transport ports read from their ports files, and the file written then. A
node keeps its ports across restarts (`ports`), so the file stays true. The first
start alone names the master-eligible nodes (`cluster.initial_master_nodes`), as
Elasticsearch asks: a restarted node joins the cluster it already belongs to.
"""

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path

from session_recall.core.errors import SessionRecallError
from session_recall.node import account, private
from session_recall.node.local_node import (
    DEFAULT_HEAP,
    START_TIMEOUT_S,
    Launch,
    LocalNode,
    NodeInfo,
    http_ok,
    wait_until,
)
from session_recall.node.secure import Security

MAX_NODES = 9  # a local cluster on one machine; each node takes its heap and a JVM


def member_names(name: str, nodes: int) -> list[str]:
    return [f"{name}-{i}" for i in range(1, nodes + 1)]


class LocalCluster:
    """The nodes of cluster `name` under `home`. Methods are safe in any order."""

    def __init__(
        self,
        *,
        home: Path,
        name: str = "default",
        nodes: int | None = None,
        heap: str = DEFAULT_HEAP,
        settings: Mapping[str, str] | None = None,
        security: Security | None = None,
    ) -> None:
        """`security`: a secured cluster (HTTPS, and TLS between its nodes); the
        cluster's record keeps it for later starts."""
        self.home = home
        self.name = name
        self._record = account.runtime_root(home) / "clusters" / f"{name}.json"
        known = self._read_record()
        count = nodes or int(known.get("nodes", 0))
        if not 2 <= count <= MAX_NODES:
            raise SessionRecallError(
                f"A local cluster has 2 to {MAX_NODES} nodes, not {count}.",
                hint="Pass --nodes 3, say; one node runs without --nodes.",
            )
        if known and count != known["nodes"]:
            raise SessionRecallError(
                f"Cluster {name!r} was made with {known['nodes']} nodes, not {count}.",
                hint=f"Pass --nodes {known['nodes']}, or another --name for a new cluster.",
            )
        self.count = count
        names = member_names(name, count)
        self._bootstrapped = bool(known.get("bootstrapped"))
        recorded = known.get("security")
        self.security = security or (Security(Path(str(recorded))) if recorded else None)
        secured = {} if self.security is None else self.security.settings(transport=True)
        common = {
            "cluster.name": f"session-recall-{name}",
            "discovery.type": "multi-node",
            "discovery.seed_providers": "file",
            **secured,
            **(settings or {}),
        }
        if not self._bootstrapped:
            common["cluster.initial_master_nodes"] = ",".join(names)
        self.nodes = [
            LocalNode(
                home=home,
                name=n,
                heap=heap,
                settings={**common, "node.name": n},
                security=self.security,
            )
            for n in names
        ]

    @staticmethod
    def exists(home: Path, name: str) -> bool:
        return (account.runtime_root(home) / "clusters" / f"{name}.json").is_file()

    def start(
        self, *, timeout: float = START_TIMEOUT_S, on_step: Callable[[str], None] = print
    ) -> list[NodeInfo]:
        """Start every node not running (all at once), then wait for the cluster to
        hold them all. Returns the nodes' infos, in order. Two starts at once take
        turns, as a node's do (`LocalNode.start`)."""
        with self.nodes[0].starting(on_step):
            return self._start(timeout=timeout, on_step=on_step)

    def _start(self, *, timeout: float, on_step: Callable[[str], None]) -> list[NodeInfo]:
        self._write_record()
        running = {node.name: node.status() for node in self.nodes}
        launches = {
            node.name: node.spawn(on_step=on_step)
            for node in self.nodes
            if running[node.name] is None
        }
        if not launches:
            on_step(f"Reusing the running cluster {self.name!r}.")
        try:
            infos = self._await(running, launches, timeout)
        except SessionRecallError:
            for node in self.nodes:
                if node.name in launches:
                    node.stop()
            raise
        self._bootstrapped = True
        self._write_record()
        return infos

    def _await(
        self,
        running: dict[str, NodeInfo | None],
        launches: dict[str, Launch],
        timeout: float,
    ) -> list[NodeInfo]:
        for node in self.nodes:
            if node.name not in launches:
                continue
            opened = functools.partial(node.listening, launches[node.name], "transport")
            if not wait_until(opened, timeout=timeout):
                raise SessionRecallError(
                    f"Node {node.name!r} did not open its transport port in {timeout:.0f}s."
                )
        self._write_seed_hosts()
        infos = [
            running[node.name] or node.await_ready(launches[node.name], timeout=timeout)
            for node in self.nodes
        ]
        health = f"/_cluster/health?wait_for_nodes={self.count}&timeout=1s"
        if not wait_until(lambda: http_ok(infos[0].url, health, self.security), timeout=timeout):
            raise SessionRecallError(
                f"The cluster never held its {self.count} nodes.",
                hint=f"See the logs under {self.nodes[0].node_dir.parent}.",
            )
        return infos

    def status(self) -> list[NodeInfo | None]:
        return [node.status() for node in self.nodes]

    def stop(self) -> int:
        """Stop every node; how many were running."""
        return sum(node.stop() for node in self.nodes)

    def wipe(self) -> None:
        for node in self.nodes:
            node.wipe()
        self._record.unlink(missing_ok=True)

    def urls(self) -> list[str]:
        return [info.url for info in self.status() if info is not None]

    def _write_seed_hosts(self) -> None:
        """Every node's transport address, in every node's `unicast_hosts.txt`."""
        addresses = []
        for node in self.nodes:
            found = node.node_dir / "logs" / "transport.ports"
            try:
                addresses.append(found.read_text(encoding="utf-8").split()[0])
            except (OSError, IndexError):
                continue  # a node that is not up: the others still find each other
        text = "".join(f"{address}\n" for address in addresses)
        for node in self.nodes:
            hosts = node.node_dir / "config" / "unicast_hosts.txt"
            private.write(hosts, text)
            account.give_like(hosts, hosts.parent)  # the node reads it

    def _read_record(self) -> dict[str, int | bool | str]:
        try:
            data = json.loads(self._record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write_record(self) -> None:
        self._record.parent.mkdir(parents=True, exist_ok=True)
        record: dict[str, int | bool | str] = {
            "nodes": self.count,
            "bootstrapped": self._bootstrapped,
        }
        if self.security is not None:
            record["security"] = str(self.security.folder)
        private.write(self._record, json.dumps(record))
