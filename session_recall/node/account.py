"""Who runs a home's nodes, and where their files live.

Elasticsearch refuses to run as root: when we are root, the nodes of each home
(`SESSION_RECALL_HOME`) run as a system account of that home's own,
`session-recall-<digest of the home's path>`, which owns their files (mode 700/600,
see `private`). A node of another home runs as another account, so it cannot read
this home's keystores, keys or data. The nodes of one home share an account: they
are one operator's, whose home holds every one of their secrets already (the CA keys
and bootstrap passwords under `security/`), so an account apiece would keep nothing
from anyone. As any other user, the nodes run as that user.

That account must be able to walk into every folder above the node's files, so files
under a private home (such as /root, mode 700) go to a folder of the account's own
under `SHARED_RUNTIME`.
"""

import hashlib
import os
import pwd
import shutil
import subprocess
from pathlib import Path

from session_recall.core.errors import SessionRecallError

ACCOUNT_PREFIX = "session-recall-"
_DIGEST_CHARS = 10  # the name stays within useradd's 32 characters
# Where root's tools live when PATH leaves them out (a bare `env -i` shell, cron).
_SYSTEM_FOLDERS = "/usr/sbin:/sbin:/usr/bin:/bin"
# Used when running as root and the configured home is out of the node account's
# reach: one folder per account below it (this one only lets others pass, 711).
SHARED_RUNTIME = Path("/var/lib/session-recall")


def running_as_root() -> bool:
    return os.geteuid() == 0


def node_user(home: Path) -> str:
    """The system account that runs `home`'s nodes when we are root."""
    digest = hashlib.sha256(os.fsencode(home.resolve())).hexdigest()[:_DIGEST_CHARS]
    return f"{ACCOUNT_PREFIX}{digest}"


def ensure_node_user(user: str) -> str:
    """Create the unprivileged system account `user` once; return its name."""
    try:
        pwd.getpwnam(user)
    except KeyError:
        useradd = system_tool("useradd", user=user, hint=f"Create the user {user!r} yourself")
        result = subprocess.run(
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
            capture_output=True,
            text=True,
        )
        if result.returncode not in (0, 9):  # 9: created meanwhile by another process
            raise SessionRecallError(
                f"Could not create the user {user!r} to run Elasticsearch: {result.stderr.strip()}",
                hint=f"Create it (useradd --system {user}) or run as a non-root user.",
            ) from None
    return user


def reachable_by_others(path: Path) -> bool:
    """True when every existing folder from / down to `path` lets others pass (o+x)."""
    for folder in [*reversed(path.resolve().parents), path.resolve()]:
        if folder.exists() and not folder.stat().st_mode & 0o001:
            return False
    return True


def runtime_root(home: Path) -> Path:
    """Where `home`'s unpacked distribution and nodes live.

    A folder of its own inside the home, since as root it is handed to the node
    account: the rest of the home (cursor key, checkpoints, the nodes' secrets) stays
    with its owner.
    """
    if running_as_root() and not reachable_by_others(home):
        return SHARED_RUNTIME / node_user(home)
    return home / "elasticsearch"


def give_to(path: Path, user: str) -> None:
    """Make `user` the owner of `path` and of everything below it (as root only)."""
    if not running_as_root():
        return
    found = pwd.getpwnam(user)
    os.chown(path, found.pw_uid, found.pw_gid, follow_symlinks=False)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), found.pw_uid, found.pw_gid, follow_symlinks=False)


def give_like(path: Path, folder: Path) -> None:
    """Give `path` to the owner of `folder` (a file made by root in a node's folder)."""
    if running_as_root():
        found = folder.stat()
        os.chown(path, found.st_uid, found.st_gid)


def as_node_user(command: list[str], user: str) -> list[str]:
    """Prefix `command` so that it runs as `user` when we are root."""
    if not running_as_root():
        return command
    runuser = system_tool(
        "runuser", user=user, hint="Install util-linux, or run as a non-root user"
    )
    return [runuser, "-u", ensure_node_user(user), "--", *command]


def system_tool(name: str, *, user: str, hint: str) -> str:
    """The path of a system tool, looked for on PATH and then in the system folders
    (root's PATH does not always name /usr/sbin); a `SessionRecallError` when absent."""
    found = shutil.which(name) or shutil.which(name, path=_SYSTEM_FOLDERS)
    if found is None:
        raise SessionRecallError(
            f"Elasticsearch refuses to run as root, and {name!r}, needed to run it as the "
            f"user {user!r}, is neither on PATH nor in {_SYSTEM_FOLDERS}.",
            hint=f"{hint}.",
        )
    return found
