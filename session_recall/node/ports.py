"""The ports a node keeps across restarts.

A node first listens on the first free port of Elasticsearch's own default ranges
(9200-9299 for HTTP, 9300-9399 for transport); the ports it got are kept in
`ports.json` in its folder, which `stop` and a crash leave in place, and asked for
again on the next start. So the URL printed by the first `node start` stays valid: a
`serve` or an `ELASTICSEARCH_URL` configured with it finds the node again after a
crash. Those ranges lie below the ephemeral ones (32768 and up on Linux), so no
outgoing connection of any process can be holding the port when the node comes
back, as it could with a port the OS picked (`http.port: 0`). A port another process
took meanwhile is given up, and said so.
"""

import contextlib
import json
import socket
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from session_recall.node import private

KINDS = ("http", "transport")
# Where a node listens unless told otherwise: Elasticsearch's defaults.
DEFAULT_RANGES = {"http": "9200-9299", "transport": "9300-9399"}
_FILE = "ports.json"


def saved(node_dir: Path) -> dict[str, int]:
    """The ports the node listened on last time (none when it never started)."""
    try:
        data = json.loads((node_dir / _FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if k in KINDS and isinstance(v, int) and v > 0}


def listened(logs: Path) -> dict[str, int]:
    """The ports a started node reports in its ports files (`node.portsfile`)."""
    found = {}
    for kind in KINDS:
        with contextlib.suppress(OSError, ValueError, IndexError):
            address = (logs / f"{kind}.ports").read_text(encoding="utf-8").split()[0]
            found[kind] = int(address.rsplit(":", 1)[1])
    return found


def save(node_dir: Path, ports: Mapping[str, int]) -> None:
    private.write(node_dir / _FILE, json.dumps(dict(ports)))


def bindable(port: int, host: str = "127.0.0.1") -> bool:
    """Nothing listens on `port`. SO_REUSEADDR as Elasticsearch sets it: connections a
    killed node left in TIME_WAIT do not keep its port from it."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


# A node killed a moment ago may not have let go of its port yet: the kernel closes a
# SIGKILLed JVM's sockets only once the process is gone, which takes a while for a
# large heap on a loaded machine. Its own restart must not take that for a stranger.
# `pinned_settings(release_wait=...)` sets another wait (the tests shorten it).
PORT_RELEASE_S = 15.0


def _freed(port: int, *, timeout: float) -> bool:
    """The port is free now, or becomes free within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not bindable(port):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


def pinned_settings(
    node_dir: Path,
    settings: Mapping[str, str],
    *,
    name: str,
    on_step: Callable[[str], None],
    release_wait: float = PORT_RELEASE_S,
) -> dict[str, str]:
    """`settings` with each port the node had before asked for again, unless a setting
    chooses another explicitly (anything but the default range) or another process
    holds it `release_wait` seconds on."""
    pinned = dict(settings)
    for kind, port in saved(node_dir).items():
        key = f"{kind}.port"
        if pinned.get(key, DEFAULT_RANGES[kind]) != DEFAULT_RANGES[kind]:
            continue
        if _freed(port, timeout=release_wait):
            pinned[key] = str(port)
        elif kind == "http":
            on_step(
                f"Port {port}, where node {name!r} listened before, is taken by another "
                "process: the node gets a new port, so its URL changes. Update "
                "ELASTICSEARCH_URL to the URL printed last."
            )
    return pinned
