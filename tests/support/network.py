"""Ports for servers a test starts on this machine."""

import socket


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it; it is free again on close)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
