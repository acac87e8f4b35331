"""`session-recall roles show` and `session-recall users create|list|delete`: the
least-privilege roles, for any cluster, and the users of the local secured node."""

import json

import click

from session_recall.cli.context import AppContext, pass_app
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
@node_option
@pass_app
def create(app: AppContext, chosen: tuple[Role, ...], name: str | None, node_name: str) -> None:
    """Create a user with a generated password, and print its credentials once, as
    environment lines. The node takes it within a few seconds.

    \b
    Example:
      session-recall users create --role recall > recall.env
    """
    realm = _realm(app, node_name)
    user = name or "-".join(chosen)
    password = realm.create(user, chosen, app.settings.index)
    click.echo(f"User {user!r} created with the role(s) {', '.join(chosen)}.", err=True)
    click.echo(f"ELASTICSEARCH_USERNAME={user}")
    click.echo(f"ELASTICSEARCH_PASSWORD={password}")


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
