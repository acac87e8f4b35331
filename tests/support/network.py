"""Ports for servers a test starts on this machine, and a server that never answers."""

import socket
from collections.abc import Iterator
from contextlib import contextmanager

# How long past its deadline a call to a hung node may end on a loaded 2-core machine: a
# liveness bound, not a speed target. The client's own timeout (30 s) lies beyond a
# deadline plus this margin, so a call that ignores its deadline fails the bound.
LIVENESS_MARGIN_S = 10.0


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it; it is free again on close)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def silent_server() -> Iterator[str]:
    """The URL of a server that takes connections and never answers a request: a hung
    node, as its clients see it (the kernel completes the connections; nobody reads)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
