"""`session-recall setup`: templates, the partitioned layout and the first partition."""

import click

from session_recall.cli.context import AppContext, pass_app
from session_recall.core.partitions import GRANULARITIES
from session_recall.templates import install


@click.command()
@click.option(
    "--partition",
    "granularity",
    type=click.Choice(GRANULARITIES),
    help="Period each partition covers (UTC). Default: month, or what was set before.",
)
@click.option(
    "--shards", type=click.IntRange(min=1), help="Primary shards per partition (default 1)."
)
@click.option(
    "--routing-partition-size",
    type=click.IntRange(min=1),
    help="Shards of a partition one user's events spread over (default 1; under --shards).",
)
@click.option("--replicas", type=click.IntRange(min=0), help="Replicas of each shard (default 0).")
@pass_app
def setup(
    app: AppContext,
    granularity: str | None,
    shards: int | None,
    routing_partition_size: int | None,
    replicas: int | None,
) -> None:
    """Install the index templates and the current period's partition. Safe to repeat.

    Each event is stored in the partition of its own timestamp's period, made from
    the template on first write; every partition joins the alias that recall and
    erasure read. Options left out keep the values set before.

    \b
    Example:
      session-recall --index session-events setup --partition month --replicas 1
    """
    result = install(
        app.client,
        app.settings.index,
        granularity=granularity,
        shards=shards,
        routing_partition_size=routing_partition_size,
        replicas=replicas,
    )
    layout = result.layout
    verb = "created" if result.created_index else "kept"
    click.echo(
        f"Templates installed; alias {result.alias!r} spans one partition per "
        f"{layout.granularity} ({layout.shards} shard(s), routing partition size "
        f"{layout.routing_partition_size}, {layout.replicas} replica(s)); "
        f"{result.partition} {verb}."
    )
    if result.legacy:
        click.echo(
            f"Also read through the alias: {', '.join(result.legacy)} (single-index layout); "
            "`session-recall migrate` moves its events into partitions."
        )
