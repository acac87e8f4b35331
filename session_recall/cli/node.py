"""`session-recall node start|stop|status`: a local Elasticsearch without Docker, one
node or a cluster of several (`--nodes`)."""

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.node import LocalNode, private
from session_recall.node.cluster import LocalCluster
from session_recall.node.local_node import DEFAULT_HEAP, START_TIMEOUT_S, NodeInfo
from session_recall.node.secure import Security


def _node(
    app: AppContext, name: str, heap: str = DEFAULT_HEAP, settings: tuple[str, ...] = ()
) -> LocalNode:
    return LocalNode(home=app.settings.home, name=name, heap=heap, settings=_extra(settings))


def _extra(settings: tuple[str, ...]) -> dict[str, str]:
    extra = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not key=value.", param_hint="-E")
        extra[key] = value
    return extra


def _cluster(app: AppContext, name: str) -> LocalCluster | None:
    """The cluster `name`, when `node start --nodes` made one."""
    if not LocalCluster.exists(app.settings.home, name):
        return None
    return LocalCluster(home=app.settings.home, name=name)


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
@click.option(
    "--nodes",
    type=click.IntRange(min=2),
    help="Start a local cluster of this many nodes (NAME-1, NAME-2...), each with its own "
    "data and logs.",
)
@click.option(
    "--secure",
    is_flag=True,
    help="Security on: HTTPS with a CA of the node's own, users and roles (`session-recall "
    "users create`); TLS between the nodes of a cluster. Kept for later starts.",
)
@pass_app
def start(
    app: AppContext,
    name: str,
    heap: str,
    settings: tuple[str, ...],
    timeout: float,
    nodes: int | None,
    secure: bool,
) -> None:
    """Start the node (or the cluster), or reuse it if it runs; print its URL on the
    last line (a cluster's: every node's, comma-separated, as ELASTICSEARCH_URL takes
    them).

    \b
    Examples:
      export ELASTICSEARCH_URL=$(session-recall node start | tail -n1)
      export ELASTICSEARCH_URL=$(session-recall node start --nodes 3 | tail -n1)
      export ELASTICSEARCH_URL=$(session-recall node start --secure | tail -n1)
    """
    step = lambda m: click.echo(m, err=True)  # noqa: E731
    security = None
    if secure:  # the folder of every node's secrets: its names are nobody else's either
        security = Security(private.folder(app.settings.home / "security") / name)
    if nodes is not None or _cluster(app, name) is not None:
        cluster = LocalCluster(
            home=app.settings.home,
            name=name,
            nodes=nodes,
            heap=heap,
            settings=_extra(settings),
            security=security,
        )
        infos = cluster.start(timeout=timeout, on_step=step)
        _how_to_connect(infos[0])
        click.echo(",".join(info.url for info in infos))
        return
    node = LocalNode(
        home=app.settings.home, name=name, heap=heap, settings=_extra(settings), security=security
    )
    info = node.start(timeout=timeout, on_step=step)
    _how_to_connect(info)
    click.echo(info.url)


def _how_to_connect(info: NodeInfo) -> None:
    """For a secured node: the CA to trust, and how to get credentials (never the
    bootstrap password itself)."""
    if info.ca is None:
        return
    click.echo(
        f"Security is on. Trust its CA: export ELASTICSEARCH_CA_CERTS={info.ca}\n"
        "Credentials: session-recall users create --role ROLE (ingest, recall, enrich, "
        "admin; see `session-recall roles show`).",
        err=True,
    )


@node.command()
@name_option
@pass_app
def stop(app: AppContext, name: str) -> None:
    """Stop the node (or every node of the cluster) and every process it started.

    \b
    Example:
      session-recall node stop
    """
    cluster = _cluster(app, name)
    if cluster is not None:
        stopped = cluster.stop()
        click.echo(
            f"Stopped {stopped} of {cluster.count} nodes." if stopped else "No node was running."
        )
        return
    was_running = _node(app, name).stop()
    click.echo("Stopped." if was_running else "No node was running.")


@node.command()
@name_option
@pass_app
def status(app: AppContext, name: str) -> None:
    """Print the URL and exit 0 if the node answers; exit 1 otherwise. For a cluster,
    one line per node (its name and URL, or "not running"), and exit 0 only when every
    node answers.

    \b
    Example:
      session-recall node status || session-recall node start
    """
    cluster = _cluster(app, name)
    if cluster is not None:
        infos = cluster.status()
        for member, found in zip(cluster.nodes, infos, strict=True):
            click.echo(f"{member.name} {found.url if found else 'not running'}")
        if any(found is None for found in infos):
            raise SystemExit(1)
        return
    info = _node(app, name).status()
    if info is None:
        click.echo("Not running.", err=True)
        raise SystemExit(1)
    click.echo(info.url)
