"""Each home's nodes run as an account of its own when we are root (no home's node
reads another's files), and root's tools are found when PATH leaves out the system
folders (a bare `env -i` shell, cron), their absence a message that names them."""

import os
import pwd
import shutil
from pathlib import Path

import pytest

from session_recall.core.errors import SessionRecallError
from session_recall.node import private
from session_recall.node.account import as_node_user, node_user, system_tool

# As root only, and with some account to run as: a unit test creates no system user.
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="root")


def test_each_home_has_an_account_of_its_own_within_useradd_s_limit(tmp_path: Path):
    first, second = tmp_path / "a", tmp_path / "b"
    assert node_user(first) != node_user(second)
    assert node_user(first) == node_user(tmp_path / "x" / ".." / "a")  # the same folder
    assert len(node_user(first)) <= 32 and node_user(first).startswith("session-recall-")


@pytest.mark.skipif(shutil.which("runuser", path="/usr/sbin:/sbin") is None, reason="no runuser")
def test_runuser_is_found_outside_a_path_without_the_system_folders(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("PATH", "/nowhere")
    assert system_tool("runuser", user="u", hint="-") in ("/usr/sbin/runuser", "/sbin/runuser")


@needs_root
def test_as_root_the_command_runs_through_runuser_by_its_full_path(
    monkeypatch: pytest.MonkeyPatch,
):
    existing = pwd.getpwuid(65534).pw_name  # nobody: there already
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    command = as_node_user(["java", "-version"], existing)
    assert os.path.isabs(command[0]) and command[0].endswith("/runuser")
    assert command[1:] == ["-u", existing, "--", "java", "-version"]


def test_a_missing_tool_is_named_with_what_to_do():
    with pytest.raises(SessionRecallError) as missing:
        system_tool("no-such-tool-here", user="u", hint="Install it")
    assert "'no-such-tool-here'" in str(missing.value) and missing.value.hint == "Install it."


def test_tighten_leaves_folders_at_700_and_files_at_600_and_counts_what_was_open(
    tmp_path: Path,
):
    root = tmp_path / "node"
    (root / "data" / "deep").mkdir(parents=True)
    (root / "data" / "deep" / "segment").write_text("words")
    (root / "run").write_text("#!/bin/sh\n")
    os.chmod(root / "run", 0o755)
    (root / "link").symlink_to("/etc/passwd")
    for folder in (root, root / "data", root / "data" / "deep"):
        folder.chmod(0o755)
    (root / "data" / "deep" / "segment").chmod(0o644)
    before = os.stat("/etc/passwd").st_mode
    assert private.tighten(root) == 5  # 3 folders, 2 files; the link is left alone
    assert private.tighten(root) == 0
    modes = {p.name: p.lstat().st_mode & 0o777 for p in root.rglob("*") if not p.is_symlink()}
    assert modes == {"data": 0o700, "deep": 0o700, "segment": 0o600, "run": 0o700}
    assert os.stat("/etc/passwd").st_mode == before  # never followed


def test_a_private_file_is_never_readable_by_others_even_for_a_moment(tmp_path: Path):
    old = os.umask(0)
    try:
        path = tmp_path / "secret"
        path.write_text("open")
        path.chmod(0o666)
        private.write(path, "now private")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o600 and path.read_text() == "now private"
