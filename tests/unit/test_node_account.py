"""Root's tools are found when PATH leaves out the system folders (a bare `env -i`
shell, cron), and their absence is a message that names them."""

import os
import pwd
import shutil

import pytest

from session_recall.core.errors import SessionRecallError
from session_recall.node.account import NODE_USER, as_node_user, system_tool


def _node_user_exists() -> bool:
    try:
        pwd.getpwnam(NODE_USER)
    except KeyError:
        return False
    return True


# As root only, and once the node user exists: a unit test creates no system user.
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not _node_user_exists(), reason="root, with the node user made"
)


@pytest.mark.skipif(shutil.which("runuser", path="/usr/sbin:/sbin") is None, reason="no runuser")
def test_runuser_is_found_outside_a_path_without_the_system_folders(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("PATH", "/nowhere")
    assert system_tool("runuser", hint="-") in ("/usr/sbin/runuser", "/sbin/runuser")


@needs_root
def test_as_root_the_command_runs_through_runuser_by_its_full_path(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    command = as_node_user(["java", "-version"])
    assert os.path.isabs(command[0]) and command[0].endswith("/runuser")
    assert command[1:] == ["-u", NODE_USER, "--", "java", "-version"]


def test_a_missing_tool_is_named_with_what_to_do():
    with pytest.raises(SessionRecallError) as missing:
        system_tool("no-such-tool-here", hint="Install it")
    assert "'no-such-tool-here'" in str(missing.value) and missing.value.hint == "Install it."
