"""A single local Elasticsearch node: start (or reuse), stop, status.

Each node has a name and a folder of its own (config, data, logs, state), so a test
can run a dedicated node, with a tiny write queue say, beside the shared one. The
node runs in its own process group, which `stop` ends as a whole. It keeps its ports
across restarts, crashes included (`ports`), so its URL stays valid.
"""

import json
import os
import pwd
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from session_recall.core.errors import SessionRecallError
from session_recall.node import account, distribution, lock, ports, private
from session_recall.node.jdk import find_java_home
from session_recall.node.secure import Security
from session_recall.pins import elasticsearch_version

DEFAULT_HEAP = "512m"
START_TIMEOUT_S = 240.0
STOP_TIMEOUT_S = 60.0

# Roughly what Elastic's own test clusters set for a single local node.
BASE_SETTINGS: Mapping[str, str] = {
    "discovery.type": "single-node",
    "network.host": "127.0.0.1",
    "http.port": ports.DEFAULT_RANGES["http"],
    "transport.port": ports.DEFAULT_RANGES["transport"],
    "node.portsfile": "true",
    "xpack.security.enabled": "false",
    "cluster.routing.allocation.disk.threshold_enabled": "false",
    "action.destructive_requires_name": "false",
}


@dataclass(frozen=True)
class Launch:
    """A node process just spawned, not yet known to answer."""

    process: subprocess.Popen[bytes]
    console: Path


@dataclass(frozen=True)
class NodeInfo:
    name: str
    url: str
    pgid: int
    version: str
    ca: str | None = None  # a secured node's CA file: what ELASTICSEARCH_CA_CERTS names


def wait_until(predicate: Callable[[], bool], *, timeout: float, interval: float = 0.25) -> bool:
    """Poll `predicate` until it holds or `timeout` seconds pass; True if it held."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def http_ok(url: str, path: str, security: Security | None = None) -> bool:
    """Whether a GET of `path` answers 200 (as the bootstrap user, on a secured node)."""
    try:
        if security is not None:
            return security.open(url + path) == 200
        with urllib.request.urlopen(url + path, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group, read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command: state, ppid, pgrp, ...
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            members.append(int(entry.name))
    return members


# Nodes this process started, kept so their leader can be reaped (no zombie, and no
# ResourceWarning for a Popen dropped while its process runs).
_STARTED_HERE: dict[int, subprocess.Popen[bytes]] = {}


def _reap_finished() -> None:
    """Reap the leaders started here of nodes stopped from elsewhere (another
    process's `session-recall node stop`), which left no state to find them by."""
    for pgid, leader in list(_STARTED_HERE.items()):
        if leader.poll() is not None:
            del _STARTED_HERE[pgid]


def _group_alive(pgid: int) -> bool:
    leader = _STARTED_HERE.get(pgid)
    if leader is not None and leader.poll() is not None:
        del _STARTED_HERE[pgid]
    return bool(group_members(pgid))


class LocalNode:
    """One named node under `home`. Methods are safe to call in any order."""

    def __init__(
        self,
        *,
        home: Path,
        name: str = "default",
        version: str | None = None,
        heap: str = DEFAULT_HEAP,
        settings: Mapping[str, str] | None = None,
        security: Security | None = None,
    ) -> None:
        """`security`: a secured node (`node start --secure`), with these secrets;
        the node's own folder records it, so a later `LocalNode` of the same name
        finds it secured without being told."""
        self.home = home
        self.name = name
        self.version = version or elasticsearch_version()
        self.heap = heap
        self.runtime = account.runtime_root(home)
        self.user = account.node_user(home)  # when we are root: see `account`
        self.node_dir = self.runtime / "nodes" / name
        self._state_file = self.node_dir / "node.json"
        self.security = security or self._recorded_security()
        secured = {} if self.security is None else self.security.settings(transport=False)
        self.settings = {**BASE_SETTINGS, **secured, **(settings or {})}

    # -- public -----------------------------------------------------------------
    def status(self) -> NodeInfo | None:
        """The running node, or None when it is not running or does not answer."""
        state = self._read_state()
        if state is None or not _group_alive(state.pgid):
            return None
        # As the state says it was started: a node started plain answers plain.
        security = self.security if state.ca is not None else None
        return state if http_ok(state.url, "/_cluster/health", security) else None

    def start(
        self, *, timeout: float = START_TIMEOUT_S, on_step: Callable[[str], None] = print
    ) -> NodeInfo:
        """Start the node, or reuse it when it runs. Two starts of one name at once (two
        shells, two test sessions) take turns: the second waits for the first, then
        finds the node running, rather than launching a process that Elasticsearch
        stops at once ("failed to obtain node locks")."""
        with self.starting(on_step):
            return self._start(timeout=timeout, on_step=on_step)

    def starting(self, on_step: Callable[[str], None]) -> AbstractContextManager[None]:
        """The lock that one start of this node's name holds at a time."""
        folder = private.folder(self.home / "locks")
        return lock.held(
            folder / f"node-{self.name}.lock",
            on_wait=lambda: on_step(
                f"Another start of the node {self.name!r} is under way; waiting for it..."
            ),
        )

    def _start(self, *, timeout: float, on_step: Callable[[str], None]) -> NodeInfo:
        running = self.status()
        if running is not None and (running.ca is None) == (self.security is None):
            on_step(f"Reusing the running node {self.name!r} at {running.url}.")
            return running
        if running is not None:  # started plain, now asked for security (`spawn` stops it)
            on_step(f"Restarting the node {self.name!r} with security on.")
        launch = self.spawn(on_step=on_step)
        return self.await_ready(launch, timeout=timeout)

    def spawn(self, *, on_step: Callable[[str], None] = print) -> "Launch":
        """Start the node's process and return at once: a cluster's nodes are all
        spawned before any of them can form the cluster (`await_ready`)."""
        self.stop()  # a stale state file or a half-started group: clear it first
        self._loose_files(on_step)
        es_home = self._distribution(on_step)
        java_home = self._java_home(find_java_home())
        self._prepare_node_dir(es_home)
        recorded = self._recorded_security()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "ES_JAVA_HOME": str(java_home),
            "ES_PATH_CONF": str(self.node_dir / "config"),
            "ES_JAVA_OPTS": f"-Xms{self.heap} -Xmx{self.heap}",
            "LANG": "C.UTF-8",
        }
        if self.security is not None:
            # The keystore holds the bootstrap password of the secrets it was made with:
            # none for a node first started plain, other ones for a folder changed since.
            self.security.prepare(on_step=on_step).install(
                self.node_dir / "config",
                es_home=es_home,
                env=env,
                user=self.user,
                password_known=recorded == self.security,
            )
            private.write(self._security_record, str(self.security.folder))
        private.tighten(self.runtime)  # what was made just now: a new distribution, say

        logs = self.node_dir / "logs"
        for kind in ports.KINDS:
            (logs / f"{kind}.ports").unlink(missing_ok=True)
        settings = ports.pinned_settings(
            self.node_dir, self.settings, name=self.name, on_step=on_step
        )
        command = [str(es_home / "bin" / "elasticsearch"), "--quiet"]
        for key, value in settings.items():
            command.append(f"-E{key}={value}")
        console = self.node_dir / "logs" / "console.log"
        on_step(f"Starting Elasticsearch {self.version} ({self.name!r}, heap {self.heap})...")
        with private.appending(console) as log:
            process = subprocess.Popen(
                account.as_node_user(
                    ["env", *(f"{k}={v}" for k, v in env.items()), *command], self.user
                ),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=self.node_dir,
                umask=private.UMASK,  # the node's data, logs and keystore: its own alone
            )
        _STARTED_HERE[process.pid] = process
        return Launch(process=process, console=console)

    def listening(self, launch: "Launch", kind: str) -> bool:
        """The spawned node opened its `kind` port ("http", "transport"); raises when
        it exited instead."""
        process = launch.process
        if process.poll() is not None:
            raise SessionRecallError(
                f"Elasticsearch exited with code {process.returncode} while starting:\n"
                + self._log_tail(launch.console),
                hint=f"See {launch.console} and {self.node_dir / 'logs'}.",
            )
        found = self.node_dir / "logs" / f"{kind}.ports"
        return found.is_file() and found.stat().st_size > 0

    def await_ready(
        self, launch: "Launch", *, timeout: float = START_TIMEOUT_S, health: str = "yellow"
    ) -> NodeInfo:
        """Wait until the spawned node answers and its cluster reports `health`, then
        keep its ports and state. Kills the node when that does not happen in time."""
        pgid = launch.process.pid
        logs = self.node_dir / "logs"
        if not wait_until(lambda: self.listening(launch, "http"), timeout=timeout):
            self._kill_group(pgid)
            raise SessionRecallError(
                f"Elasticsearch did not open its HTTP port within {timeout:.0f}s.",
                hint=f"See {launch.console}; on a loaded machine, try again with a longer "
                "--timeout.",
            )
        scheme = "http" if self.security is None else "https"
        url = f"{scheme}://{(logs / 'http.ports').read_text().split()[0]}"
        path = f"/_cluster/health?wait_for_status={health}&timeout=1s"
        if not wait_until(
            lambda: self.listening(launch, "http") and http_ok(url, path, self.security),
            timeout=timeout,
        ):
            self._kill_group(pgid)
            raise SessionRecallError(f"Elasticsearch at {url} never reported a healthy cluster.")
        ports.save(self.node_dir, ports.listened(logs))
        ca = None if self.security is None else str(self.security.ca)
        info = NodeInfo(name=self.name, url=url, pgid=pgid, version=self.version, ca=ca)
        private.write(self._state_file, json.dumps(info.__dict__))
        return info

    def stop(self, *, timeout: float = STOP_TIMEOUT_S) -> bool:
        """Stop the node and every process of its group; True if one was running."""
        state = self._read_state()
        if state is None:
            _reap_finished()
            return False
        was_running = _group_alive(state.pgid)
        if was_running:
            self._kill_group(state.pgid, timeout=timeout)
        self._state_file.unlink(missing_ok=True)
        return was_running

    def wipe(self) -> None:
        """Stop the node and delete its data (not the shared distribution)."""
        self.stop()
        shutil.rmtree(self.node_dir, ignore_errors=True)

    # -- private ----------------------------------------------------------------
    @property
    def _security_record(self) -> Path:
        return self.node_dir / "security-folder"

    def _recorded_security(self) -> Security | None:
        try:
            return Security(Path(self._security_record.read_text(encoding="utf-8").strip()))
        except OSError:
            return None

    def _read_state(self) -> NodeInfo | None:
        try:
            return NodeInfo(**json.loads(self._state_file.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None

    def _kill_group(self, pgid: int, *, timeout: float = STOP_TIMEOUT_S) -> None:
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                return
            if wait_until(lambda: not _group_alive(pgid), timeout=wait):
                return
        raise SessionRecallError(f"Processes of group {pgid} survived SIGKILL.")

    def _distribution(self, on_step: Callable[[str], None]) -> Path:
        cache = self.home / "dist"
        if not (cache / f"{distribution.ARTIFACT}-{self.version}.zip").is_file():
            on_step(f"Fetching Elasticsearch {self.version} with Maven (once)...")
        zip_path = distribution.fetch_zip(self.version, cache)
        if self.runtime.parent == account.SHARED_RUNTIME:
            self._shared_runtime(on_step)
        private.folder(self.runtime)
        es_home = distribution.unpack(zip_path, self.runtime)
        if account.running_as_root():
            self._take_runtime(on_step)
        return es_home

    def _take_runtime(self, on_step: Callable[[str], None]) -> None:
        """Give the runtime to this home's account: new, or an earlier release's (whose
        nodes all ran as one account). Not while a node of it still runs as that one:
        it would lose its own files; this node then runs as that account too, once."""
        account.ensure_node_user(self.user)
        owner = self.runtime.stat().st_uid
        if owner == pwd.getpwnam(self.user).pw_uid:
            return
        running = [node.name for node in self._neighbours() if node._alive()]
        if owner != 0 and running:
            self.user = pwd.getpwuid(owner).pw_name
            on_step(
                f"The nodes {', '.join(running)} of this home run as the account "
                f"{self.user!r}, which every home of an earlier release shared: this "
                f"node does too. Stop them, and the next start moves the home to its own "
                f"account, {account.node_user(self.home)!r}."
            )
            return
        account.give_to(self.runtime, self.user)

    def _alive(self) -> bool:
        """Its processes run (answering or not yet)."""
        state = self._read_state()
        return state is not None and _group_alive(state.pgid)

    def _neighbours(self) -> list["LocalNode"]:
        """The other nodes under this home's runtime."""
        nodes = self.runtime / "nodes"
        names = sorted(p.name for p in nodes.iterdir() if p.is_dir()) if nodes.is_dir() else []
        return [LocalNode(home=self.home, name=n) for n in names if n != self.name]

    def _shared_runtime(self, on_step: Callable[[str], None]) -> None:
        """The folder above each account's own: others may pass, not look (711)."""
        shared = account.SHARED_RUNTIME
        shared.mkdir(parents=True, exist_ok=True)
        shared.chmod(0o711)
        if (shared / "nodes").is_dir() and not self.runtime.exists():
            on_step(
                f"Nodes of an earlier release are in {shared}; this one keeps its nodes in "
                f"{self.runtime}. To keep them, stop them with that release and move "
                f"{shared}/nodes and {shared}/clusters there."
            )

    def _java_home(self, java_home: Path) -> Path:
        """A JDK the node user can read: copied next to the node when it cannot."""
        if not account.running_as_root() or account.reachable_by_others(java_home):
            return java_home
        copy = self.runtime / "jdk"
        if not (copy / "bin" / "java").exists():
            shutil.copytree(java_home, copy, symlinks=True)
            account.give_to(copy, self.user)
        return copy

    def _prepare_node_dir(self, es_home: Path) -> None:
        config = self.node_dir / "config"
        if not config.is_dir():
            shutil.copytree(es_home / "config", config)
        for sub in ("data", "logs"):
            private.folder(self.node_dir / sub)
        private.write(
            config / "elasticsearch.yml",
            f"path.data: {self.node_dir / 'data'}\npath.logs: {self.node_dir / 'logs'}\n",
        )
        account.give_to(self.node_dir, self.user)
        account.give_like(self.node_dir.parent, self.runtime)  # `nodes/`, new or not

    def _loose_files(self, on_step: Callable[[str], None]) -> None:
        """Tighten what an earlier release, or a hand, left open to other accounts,
        and say so: the nodes' data, logs, config, keys and the distribution."""
        loose = private.tighten(self.runtime)
        if loose:
            on_step(
                f"{loose} file(s) and folder(s) under {self.runtime} were open to other "
                "accounts; they are now their owner's alone (folders 700, files 600)."
            )

    @staticmethod
    def _log_tail(path: Path, lines: int = 15) -> str:
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no console output)"
