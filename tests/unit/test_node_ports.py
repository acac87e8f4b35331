"""A node asks for the ports it had before, unless told otherwise or they are taken."""

import socket
import threading
from pathlib import Path

from session_recall.node import ports


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_ports_of_the_last_start_are_asked_for_again(tmp_path: Path):
    http, transport = _free_port(), _free_port()
    ports.save(tmp_path, {"http": http, "transport": transport})
    steps: list[str] = []

    settings = ports.pinned_settings(
        tmp_path,
        {f"{k}.port": v for k, v in ports.DEFAULT_RANGES.items()},
        name="n",
        on_step=steps.append,
    )

    assert settings == {"http.port": str(http), "transport.port": str(transport)}
    assert steps == []


def test_an_explicit_port_setting_wins_over_the_saved_one(tmp_path: Path):
    ports.save(tmp_path, {"http": _free_port()})
    settings = ports.pinned_settings(tmp_path, {"http.port": "9299"}, name="n", on_step=print)
    assert settings == {"http.port": "9299"}


def test_a_saved_port_another_process_took_is_given_up_and_said_so(tmp_path: Path):
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        taken = other.getsockname()[1]
        ports.save(tmp_path, {"http": taken})
        steps: list[str] = []

        # The default wait is for a JVM's exit on a loaded machine: a second will do here.
        settings = ports.pinned_settings(
            tmp_path,
            {"http.port": "9200-9299"},
            name="n",
            on_step=steps.append,
            release_wait=1.0,
        )

    assert settings == {"http.port": "9200-9299"}
    (message,) = steps
    assert f"Port {taken}" in message and "ELASTICSEARCH_URL" in message


def test_a_node_that_never_started_has_no_saved_ports(tmp_path: Path):
    assert ports.saved(tmp_path) == {}
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "http.ports").write_text("127.0.0.1:9201\n")
    assert ports.listened(tmp_path / "logs") == {"http": 9201}


def test_a_port_let_go_of_shortly_after_is_kept(tmp_path: Path):
    """A node killed a moment ago holds its port until the process is gone: its own
    restart waits for it rather than moving the node to another URL."""
    dying = socket.socket()
    dying.bind(("127.0.0.1", 0))
    dying.listen()
    port = dying.getsockname()[1]
    ports.save(tmp_path, {"http": port})
    released = threading.Timer(1.0, dying.close)
    released.start()
    try:  # a wait as long as the default's: well past the second it takes here
        settings = ports.pinned_settings(
            tmp_path, {"http.port": "9200-9299"}, name="n", on_step=print, release_wait=15.0
        )
    finally:
        released.join()
    assert settings == {"http.port": str(port)}
