"""`session-recall roles show` and `session-recall users create|list|delete`: the
least-privilege roles, for any cluster, and the users of the local secured node."""

import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import TextIO

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.core.access import ROLES, Role
from session_recall.core.errors import ConfigurationError
from session_recall.node import LocalCluster, LocalNode
from session_recall.node.users import FileRealm
from session_recall.security.roles import COMMAND_ROLES, api_key_body, roles_yml

role_choice = click.Choice(ROLES)


@click.group()
def roles() -> None:
    """The least-privilege roles: ingest, recall, enrich and admin."""


@roles.command()
@click.option(
    "--role", "only", type=role_choice, multiple=True, help="Only this role (repeatable)."
)
@click.option(
    "--format",
    "shape",
    type=click.Choice(["api-key", "file", "commands"]),
    default="api-key",
    show_default=True,
    help="api-key: the body of POST /_security/api_key; file: roles.yml for a file realm; "
    "commands: which role each command needs.",
)
@pass_app
def show(app: AppContext, only: tuple[Role, ...], shape: str) -> None:
    """Print the roles' privileges on the alias (--index), in the form a cluster takes.

    \b
    Examples, for a hosted cluster:
      session-recall roles show --role recall > recall-key.json
      curl -u elastic -H 'Content-Type: application/json' \\
        -X POST "$ELASTICSEARCH_URL/_security/api_key" -d @recall-key.json
    """
    chosen = only or ROLES
    alias = app.settings.index
    if shape == "file":
        click.echo(roles_yml(alias, chosen), nl=False)
    elif shape == "commands":
        for command, needed in COMMAND_ROLES.items():
            click.echo(f"{command}: {', '.join(needed)}")
    else:
        click.echo(json.dumps(api_key_body(alias, chosen), indent=2))


node_option = click.option(
    "--node", "node_name", default="default", show_default=True, help="The local node (or cluster)."
)


def _realm(app: AppContext, node_name: str) -> FileRealm:
    """The file realm of the local secured node (every node, for a cluster)."""
    home = app.settings.home
    members = (
        LocalCluster(home=home, name=node_name).nodes
        if LocalCluster.exists(home, node_name)
        else [LocalNode(home=home, name=node_name)]
    )
    if any(member.security is None for member in members):
        raise ConfigurationError(
            f"The local node {node_name!r} is not secured: it has no users.",
            hint="Start it with `session-recall node start --secure`; on another cluster, "
            "make an API key from `session-recall roles show`.",
        )
    return FileRealm([member.node_dir / "config" for member in members])


@click.group()
def users() -> None:
    """Users of the local secured node (`node start --secure`) and their roles."""


@users.command()
@click.option(
    "--role",
    "chosen",
    type=role_choice,
    required=True,
    multiple=True,
    help="Its role (repeatable, e.g. serve's ingest, recall and enrich).",
)
@click.option("--name", help="The user's name.  [default: the role's name]")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the credentials to this new file, readable by its owner only (600), "
    "rather than to standard output.",
)
@node_option
@pass_app
def create(
    app: AppContext,
    chosen: tuple[Role, ...],
    name: str | None,
    output: Path | None,
    node_name: str,
) -> None:
    """Create a user with a generated password, and write its credentials once, as
    environment lines: to --output, a new file at 600, or to standard output (a file
    it is redirected to is made 600 too). The node takes it within a few seconds.

    \b
    Example:
      session-recall users create --role recall --output recall.env
      ( set -a; . ./recall.env; session-recall search --user alice "lisbon" )
    """
    realm = _realm(app, node_name)
    user = name or "-".join(chosen)
    sink = _new_private_file(output) if output is not None else None
    try:
        password = realm.create(user, chosen, app.settings.index)
    except BaseException:
        if sink is not None and output is not None:
            sink.close()
            output.unlink()
        raise
    lines = f"ELASTICSEARCH_USERNAME={user}\nELASTICSEARCH_PASSWORD={password}\n"
    made = f"User {user!r} created with the role(s) {', '.join(chosen)}"
    if sink is not None:
        with sink:
            sink.write(lines)
        click.echo(f"{made}; its credentials are in {output} (600).", err=True)
        return
    click.echo(f"{made}.", err=True)
    if _made_private(sys.stdout):
        click.echo("The file standard output goes to is now 600: it holds a password.", err=True)
    click.echo(lines, nl=False)


def _new_private_file(path: Path) -> TextIO:
    """`path`, created for writing at 600; a usage error when it exists (another
    user's credentials, maybe), found before the user is made."""
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise click.BadParameter(
            f"{str(path)!r} exists: pick a new file.", param_hint="--output"
        ) from None
    except OSError as err:
        raise click.BadParameter(
            f"{str(path)!r} cannot be written: {err.strerror}.", param_hint="--output"
        ) from None
    return os.fdopen(handle, "w", encoding="utf-8")


def _made_private(stream: TextIO) -> bool:
    """When `stream` goes to a regular file others may read (`> admin.env`), make it
    its owner's alone; True when it was not."""
    try:
        found = os.fstat(stream.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return False  # not a file of the system (a test's runner)
    if not stat.S_ISREG(found.st_mode) or not found.st_mode & 0o077:
        return False
    os.fchmod(stream.fileno(), stat.S_IMODE(found.st_mode) & 0o700)
    return True


@users.command(name="list")
@node_option
@pass_app
def list_users(app: AppContext, node_name: str) -> None:
    """Print each user and its roles."""
    for user, held in sorted(_realm(app, node_name).users().items()):
        click.echo(f"{user}: {', '.join(held) or '(no role)'}")


@users.command()
@click.argument("name")
@node_option
@pass_app
def delete(app: AppContext, name: str, node_name: str) -> None:
    """Delete user NAME; the node stops accepting it within a few seconds."""
    if not _realm(app, node_name).delete(name):
        raise ConfigurationError(
            f"There is no user {name!r}.", hint="See `session-recall users list`."
        )
    click.echo(f"User {name!r} deleted.")
