"""As root, a home's nodes run as a system account of that home's own, made as `node
start` makes it, through `runuser` by its full path even when PATH leaves out the
system folders (a bare `env -i` shell, cron). This tier makes the account, and removes
it afterwards, so the test runs whatever the machine did before."""

import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from session_recall.node.account import as_node_user, ensure_node_user, node_user

pytestmark = pytest.mark.integration


@pytest.fixture
def account(tmp_path: Path) -> Iterator[str]:
    user = node_user(tmp_path / "home")
    yield user
    subprocess.run(["/usr/sbin/userdel", user], capture_output=True, check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="as root only: another user runs the node itself")
def test_as_root_a_homes_node_runs_as_its_own_account_through_runuser(
    monkeypatch: pytest.MonkeyPatch, account: str
):
    with pytest.raises(KeyError):
        pwd.getpwnam(account)
    assert ensure_node_user(account) == account
    assert pwd.getpwnam(account).pw_shell.endswith("nologin")
    assert ensure_node_user(account) == account  # made once
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    command = as_node_user(["java", "-version"], account)
    assert os.path.isabs(command[0]) and command[0].endswith("/runuser")
    assert command[1:] == ["-u", account, "--", "java", "-version"]


@pytest.mark.skipif(os.geteuid() == 0, reason="as another user than root")
def test_as_another_user_the_command_runs_as_it_is():
    assert as_node_user(["java", "-version"], "anyone") == ["java", "-version"]
