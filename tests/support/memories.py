"""Waiting on what `serve --consolidate` mines in the background."""

import time
from typing import Any

from starlette.testclient import TestClient


def mined_memories(web: TestClient, user: str, count: int, *, seconds: float = 60) -> list[Any]:
    """The user's current memories over HTTP once there are `count` of them; fails
    with what was mined so far when they are not there within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        found: list[Any] = web.get(f"/v1/users/{user}/memories").json()["memories"]
        if len(found) == count:
            return found
        assert time.monotonic() < deadline, f"mined so far: {found}"
        time.sleep(0.2)
