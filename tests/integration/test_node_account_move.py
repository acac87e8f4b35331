"""A home an earlier release gave to the one account every home shared moves to the
home's own account at a start, but not while a node of it still runs as the old one
(it would lose its own files). No node is started: the runtime is laid out as an
earlier release left it, and a "running" node is one whose process group lives."""

import json
import os
import pwd
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from session_recall.node import LocalNode
from session_recall.node.account import node_user
from tests.support.elasticsearch import home_for_tests

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="accounts are root's to give"),
]
EARLIER = "nobody"  # stands for the account an earlier release shared


@pytest.fixture
def home() -> Iterator[Path]:
    # One fixed folder: its account is made once, not once per run.
    found = home_for_tests() / "account-move"
    shutil.rmtree(found, ignore_errors=True)
    (found / "elasticsearch" / "nodes" / "old").mkdir(parents=True)
    earlier = pwd.getpwnam(EARLIER)
    for folder, _dirs, _files in os.walk(found / "elasticsearch"):
        os.chown(folder, earlier.pw_uid, earlier.pw_gid)
    yield found
    shutil.rmtree(found, ignore_errors=True)


def _owner(path: Path) -> str:
    return pwd.getpwuid(path.stat().st_uid).pw_name


def test_a_home_of_an_earlier_release_moves_to_its_own_account_once_none_of_it_runs(
    home: Path,
) -> None:
    said: list[str] = []
    running = home / "elasticsearch" / "nodes" / "old" / "node.json"
    # A node of the home runs (this test's own process group stands for it).
    state = {"name": "old", "url": "http://127.0.0.1:1", "pgid": os.getpgid(0), "version": "9"}
    running.write_text(json.dumps(state))
    node = LocalNode(home=home, name="new")
    node._take_runtime(said.append)
    assert node.user == EARLIER and _owner(home / "elasticsearch") == EARLIER
    assert "old" in said[0] and node_user(home) in said[0]
    # None runs: the next start gives the whole runtime to the home's own account.
    running.unlink()
    node = LocalNode(home=home, name="new")
    node._take_runtime(said.append)
    assert node.user == node_user(home) != EARLIER
    assert {_owner(p) for p in [home / "elasticsearch", *home.rglob("*")]} == {node.user}
