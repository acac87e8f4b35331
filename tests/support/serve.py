"""A real `session-recall serve` process for a test, its log kept in a file."""

import os
import signal
import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from session_recall.node import wait_until
from tests.support.network import free_port


@dataclass(frozen=True)
class Served:
    url: str
    log: Path
    port: int
    process: subprocess.Popen[bytes]

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def ready(url: str) -> bool:
    """/readyz says 200: Elasticsearch answers and the alias is set up."""
    try:
        return httpx.get(f"{url}/readyz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def serving(
    *,
    es_url: str,
    alias: str,
    folder: Path,
    token: str | None = None,
    log_level: str = "warning",
    env: Mapping[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
    stdout_too: bool = False,
) -> Iterator[Served]:
    """Serve `alias` on a free port, state and log under `folder`, with `env` added to
    the environment (limits, say); answers on /healthz when this yields, stopped with
    SIGTERM afterwards. The log is stderr, and with `stdout_too` stdout as well (where
    uvicorn writes its access lines)."""
    settings = {
        "ELASTICSEARCH_URL": es_url,
        "SESSION_RECALL_INDEX": alias,
        "SESSION_RECALL_HOME": str(folder / "home"),
        **({"SESSION_RECALL_TOKEN": token} if token else {}),
    }
    port = free_port()
    log = folder / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            ["session-recall", "serve", "--port", str(port), "--log-level", log_level],
            env={**os.environ, **settings, **(env or {})},
            stdout=sink if stdout_too else subprocess.DEVNULL,
            stderr=sink,
            preexec_fn=preexec_fn,
        )
    served = Served(f"http://127.0.0.1:{port}", log, port, process)
    try:
        assert wait_until(lambda: process.poll() is None and _answers(served.url), timeout=60), (
            served.log_text()
        )
        yield served
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
