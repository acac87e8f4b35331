"""Elasticsearch refuses to run as root: when we are root, it runs as a dedicated user.

That user must be able to walk into every folder above the node's files, so files
under a private home (such as /root, mode 700) are moved to a place it can reach.
"""

import os
import pwd
import shutil
import subprocess
from pathlib import Path

from session_recall.core.errors import SessionRecallError

NODE_USER = "session-recall"
# Where root's tools live when PATH leaves them out (a bare `env -i` shell, cron).
_SYSTEM_FOLDERS = "/usr/sbin:/sbin:/usr/bin:/bin"
# Used when running as root and the configured home is out of the node user's reach.
SHARED_RUNTIME = Path("/var/lib/session-recall")


def running_as_root() -> bool:
    return os.geteuid() == 0


def ensure_node_user() -> str:
    """Create the unprivileged system user once; return its name."""
    try:
        pwd.getpwnam(NODE_USER)
    except KeyError:
        useradd = system_tool("useradd", hint=f"Create the user {NODE_USER!r} yourself")
        result = subprocess.run(
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", NODE_USER],
            capture_output=True,
            text=True,
        )
        if result.returncode not in (0, 9):  # 9: created meanwhile by another process
            raise SessionRecallError(
                f"Could not create the user {NODE_USER!r} to run Elasticsearch: "
                f"{result.stderr.strip()}",
                hint=f"Create it (useradd --system {NODE_USER}) or run as a non-root user.",
            ) from None
    return NODE_USER


def reachable_by_others(path: Path) -> bool:
    """True when every existing folder from / down to `path` lets others pass (o+x)."""
    for folder in [*reversed(path.resolve().parents), path.resolve()]:
        if folder.exists() and not folder.stat().st_mode & 0o001:
            return False
    return True


def runtime_root(home: Path) -> Path:
    """Where the unpacked distribution and node data live.

    A folder of its own inside the home, since as root it is handed to the node user:
    the rest of the home (cursor key, checkpoints) stays with its owner.
    """
    if running_as_root() and not reachable_by_others(home):
        return SHARED_RUNTIME
    return home / "elasticsearch"


def give_to_node_user(path: Path) -> None:
    if running_as_root():
        shutil.chown(path, user=NODE_USER, group=None)
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                shutil.chown(os.path.join(root, name), user=NODE_USER)


def as_node_user(command: list[str]) -> list[str]:
    """Prefix `command` so that it runs as the node user when we are root."""
    if not running_as_root():
        return command
    runuser = system_tool("runuser", hint="Install util-linux, or run as a non-root user")
    return [runuser, "-u", ensure_node_user(), "--", *command]


def system_tool(name: str, *, hint: str) -> str:
    """The path of a system tool, looked for on PATH and then in the system folders
    (root's PATH does not always name /usr/sbin); a `SessionRecallError` when absent."""
    found = shutil.which(name) or shutil.which(name, path=_SYSTEM_FOLDERS)
    if found is None:
        raise SessionRecallError(
            f"Elasticsearch refuses to run as root, and {name!r}, needed to run it as the "
            f"user {NODE_USER!r}, is neither on PATH nor in {_SYSTEM_FOLDERS}.",
            hint=f"{hint}.",
        )
    return found
