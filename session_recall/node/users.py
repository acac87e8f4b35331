"""Users of the local secured node: its file realm (`users`, `users_roles` and
`roles.yml` in each node's config folder), which Elasticsearch reads again within
seconds of a change. API keys and native users need the `.security` index, which
this distribution cannot create; a hosted cluster takes API keys instead (see
`session_recall.security.roles`).

Passwords are generated here, hashed with bcrypt (the `$2a$` form Elasticsearch
reads), and shown once, to whoever made the user.
"""

import os
import secrets
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path

import bcrypt
import yaml

from session_recall.core.errors import ConfigurationError
from session_recall.node import account, lock
from session_recall.security.roles import ROLES, Role, descriptor, role_name, yml_document

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-.")
MAX_NAME = 64


class FileRealm:
    """The users and roles of the nodes whose config folders are `configs` (every
    node of a cluster holds the same files)."""

    def __init__(self, configs: list[Path], *, users_delete: str = "") -> None:
        """`users_delete`: the command line that deletes a user of these nodes, NAME
        standing for the user (a hint when a name is taken)."""
        self.configs = configs
        self._users_delete = users_delete or "session-recall users delete NAME"

    # -- reads -------------------------------------------------------------------
    def users(self) -> dict[str, list[str]]:
        """Each user's name and its roles, by name."""
        config = self.configs[0]
        roles: dict[str, list[str]] = {}
        for role, names in _pairs(config / "users_roles"):
            for name in names.split(","):
                roles.setdefault(name.strip(), []).append(role)
        return {name: sorted(roles.get(name, [])) for name, _ in _pairs(config / "users")}

    # -- writes ------------------------------------------------------------------
    def create(self, name: str, roles: tuple[Role, ...], alias: str) -> str:
        """Add user `name` with `roles` on `alias`; return its generated password."""
        _check_name(name)
        password = secrets.token_urlsafe(24)
        hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(prefix=b"2a")).decode()
        with self._locked():
            if name in self.users():
                delete = self._users_delete.replace(" NAME", f" {name}", 1)
                raise ConfigurationError(
                    f"The user {name!r} exists.",
                    hint=f"Pick another --name, or `{delete}` first.",
                )
            self._put_roles(alias)
            users = dict(_pairs(self.configs[0] / "users"))
            users[name] = hashed
            members = self._members()
            for role in roles:
                members.setdefault(role_name(alias, role), []).append(name)
            self._write_all("users", users)
            self._write_all("users_roles", {r: ",".join(n) for r, n in members.items()})
        return password

    def delete(self, name: str) -> bool:
        """Remove user `name`; False when there was none."""
        with self._locked():
            users = dict(_pairs(self.configs[0] / "users"))
            if users.pop(name, None) is None:
                return False
            members = {
                role: [n for n in names if n != name] for role, names in self._members().items()
            }
            self._write_all("users", users)
            self._write_all("users_roles", {r: ",".join(n) for r, n in members.items() if n})
        return True

    # -- private -----------------------------------------------------------------
    def _members(self) -> dict[str, list[str]]:
        return {
            role: [n.strip() for n in names.split(",") if n.strip()]
            for role, names in _pairs(self.configs[0] / "users_roles")
        }

    def _put_roles(self, alias: str) -> None:
        """Define all of `alias`'s roles in `roles.yml`, beside what it defines already."""
        path = self.configs[0] / "roles.yml"
        found = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
        defined = found if isinstance(found, dict) else {}
        for role in ROLES:
            defined[role_name(alias, role)] = descriptor(alias, role)
        text = yml_document(dict(sorted(defined.items())))
        for config in self.configs:
            _replace(config / "roles.yml", text)

    def _write_all(self, file: str, entries: dict[str, str]) -> None:
        text = "".join(f"{key}:{value}\n" for key, value in entries.items())
        for config in self.configs:
            _replace(config / file, text)

    def _locked(self) -> AbstractContextManager[None]:
        return lock.held(self.configs[0] / ".users.lock")


def _check_name(name: str) -> None:
    if not 0 < len(name) <= MAX_NAME or not set(name) <= _NAME_CHARS or name[0] in "-.":
        raise ConfigurationError(
            f"{name!r} is not a usable user name.",
            hint=f"Use up to {MAX_NAME} lowercase letters, digits, '_', '-' and '.', "
            "starting with a letter, a digit or '_'.",
        )


def _pairs(path: Path) -> list[tuple[str, str]]:
    """The `key:value` lines of a file realm file (none when it is missing)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    found = []
    for line in lines:
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.lstrip().startswith("#"):
            found.append((key.strip(), value.strip()))
    return found


def _replace(path: Path, text: str) -> None:
    """Write `path` whole, by a rename: the node never reads half a file. A file that
    holds `text` already is left as it is: the node reloads a replaced file, and while
    it does, the users or roles it defined may be missing for a moment (a request of
    another user then refused), so nothing is replaced for nothing."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(temporary, 0o600)
    account.give_like(Path(temporary), path.parent)  # the node's account reads it
    os.replace(temporary, path)
