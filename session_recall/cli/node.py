"""`session-recall node start|stop|status`: a local Elasticsearch without Docker."""

import click

from session_recall.cli.context import AppContext, pass_app
from session_recall.node import LocalNode
from session_recall.node.local_node import DEFAULT_HEAP, START_TIMEOUT_S


def _node(
    app: AppContext, name: str, heap: str = DEFAULT_HEAP, settings: tuple[str, ...] = ()
) -> LocalNode:
    extra = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not key=value.", param_hint="-E")
        extra[key] = value
    return LocalNode(home=app.settings.home, name=name, heap=heap, settings=extra)


name_option = click.option(
    "--name", default="default", show_default=True, help="Node name; each has its own data."
)


@click.group()
def node() -> None:
    """Run a single local Elasticsearch node (needs a JDK 21+ and Maven)."""


@node.command()
@name_option
@click.option(
    "--heap",
    default=DEFAULT_HEAP,
    show_default=True,
    envvar="SESSION_RECALL_NODE_HEAP",
    show_envvar=True,
    help="JVM heap (512m to 1g).",
)
@click.option(
    "-E", "settings", multiple=True, metavar="KEY=VALUE", help="Extra node setting, repeatable."
)
@click.option(
    "--timeout", default=START_TIMEOUT_S, show_default=True, help="Seconds to wait for health."
)
@pass_app
def start(app: AppContext, name: str, heap: str, settings: tuple[str, ...], timeout: float) -> None:
    """Start the node, or reuse it if it runs; print its URL on the last line.

    \b
    Example:
      export ELASTICSEARCH_URL=$(session-recall node start | tail -n1)
    """
    info = _node(app, name, heap, settings).start(
        timeout=timeout, on_step=lambda m: click.echo(m, err=True)
    )
    click.echo(info.url)


@node.command()
@name_option
@pass_app
def stop(app: AppContext, name: str) -> None:
    """Stop the node and every process it started.

    \b
    Example:
      session-recall node stop
    """
    was_running = _node(app, name).stop()
    click.echo("Stopped." if was_running else "No node was running.")


@node.command()
@name_option
@pass_app
def status(app: AppContext, name: str) -> None:
    """Print the URL and exit 0 if the node answers; exit 1 otherwise.

    \b
    Example:
      session-recall node status || session-recall node start
    """
    info = _node(app, name).status()
    if info is None:
        click.echo("Not running.", err=True)
        raise SystemExit(1)
    click.echo(info.url)
