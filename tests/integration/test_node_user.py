"""As root, the node runs as a system user of its own, through `runuser` by its full
path even when PATH leaves out the system folders (a bare `env -i` shell, cron). The
user is made as `node start` makes it, if it is not there yet: this tier may make it,
the unit tier may not, so the test runs whatever the machine did before."""

import os
import pwd

import pytest

from session_recall.node.account import NODE_USER, as_node_user

pytestmark = pytest.mark.integration


@pytest.mark.skipif(os.geteuid() != 0, reason="as root only: another user runs the node itself")
def test_as_root_the_command_runs_as_the_node_user_through_runuser_by_its_full_path(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    command = as_node_user(["java", "-version"])
    assert os.path.isabs(command[0]) and command[0].endswith("/runuser")
    assert command[1:] == ["-u", NODE_USER, "--", "java", "-version"]
    assert pwd.getpwnam(NODE_USER).pw_shell.endswith("nologin")


@pytest.mark.skipif(os.geteuid() == 0, reason="as another user than root")
def test_as_another_user_the_command_runs_as_it_is():
    assert as_node_user(["java", "-version"]) == ["java", "-version"]
