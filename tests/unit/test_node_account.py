"""Root's tools are found when PATH leaves out the system folders (a bare `env -i`
shell, cron), and their absence is a message that names them."""

import shutil

import pytest

from session_recall.core.errors import SessionRecallError
from session_recall.node.account import system_tool


@pytest.mark.skipif(shutil.which("runuser", path="/usr/sbin:/sbin") is None, reason="no runuser")
def test_runuser_is_found_outside_a_path_without_the_system_folders(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("PATH", "/nowhere")
    assert system_tool("runuser", hint="-") in ("/usr/sbin/runuser", "/sbin/runuser")


def test_a_missing_tool_is_named_with_what_to_do():
    with pytest.raises(SessionRecallError) as missing:
        system_tool("no-such-tool-here", hint="Install it")
    assert "'no-such-tool-here'" in str(missing.value) and missing.value.hint == "Install it."
