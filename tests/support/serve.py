"""`session-recall serve` as a real process of a test's own, on a free port."""

import os
import subprocess
import sys
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
    port: int
    log: Path  # stdout and stderr
    process: subprocess.Popen[bytes]


def ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def serving(
    es_url: str,
    alias: str,
    home: Path,
    *,
    env: Mapping[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> Iterator[Served]:
    """`serve`, ready, until the block ends (then SIGTERM, and waited for)."""
    port, log = free_port(), home / "serve.log"
    with log.open("ab") as output:
        process = subprocess.Popen(
            [sys.executable, "-c", "from session_recall.cli import main; main()",
             "--es-url", es_url, "--index", alias, "--home", str(home),
             "serve", "--port", str(port), "--log-level", "warning"],
            stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})}, preexec_fn=preexec_fn,
        )  # fmt: skip
    served = Served(f"http://127.0.0.1:{port}", port, log, process)
    try:
        assert wait_until(lambda: ready(served.url), timeout=60), log.read_text()
        yield served
    finally:
        process.terminate()
        process.wait(timeout=60)
