"""`session-recall embed --backfill`: vectors for the stored events that lack them."""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from session_recall.cli.context import AppContext, pass_app
from session_recall.cli.options import page_size_option
from session_recall.embedders import embedder_for
from session_recall.indexer import BackfillSummary, backfill
from session_recall.indexer.backfill import DEFAULT_PAGE


@click.command("embed")
@click.option(
    "--backfill", "run_backfill", is_flag=True, required=True,
    help="Embed every stored event the configured model has not processed yet.",
)  # fmt: skip
@page_size_option(DEFAULT_PAGE, "Events embedded and updated per request.")
@pass_app
def embed(app: AppContext, run_backfill: bool, page_size: int) -> None:
    """Add the configured embedder's vectors to stored events that lack them: events
    stored while the embedder was down, or before a model change (the new model's
    vectors go to a field of their own).

    Idempotent and resumable: run it again at any time, it carries on where it
    stopped. Exit 1 when some events could not be updated.

    \b
    Example:
      session-recall embed --backfill
    """
    embedder = embedder_for(app.settings)
    if embedder is None:
        raise click.UsageError("SESSION_RECALL_EMBEDDER is none: there is no model to embed with.")
    client = app.client
    with _progress() as report:
        summary = backfill(
            client, app.settings.index, embedder, page_size=page_size, on_progress=report
        )
    client.indices.refresh(index=app.settings.index)
    click.echo(summary.line())
    if summary.failed:
        sys.exit(1)


@contextmanager
def _progress() -> Iterator[Callable[[BackfillSummary], None]]:
    """A bar on a terminal (events done of those missing at the start); nothing else."""
    if not sys.stderr.isatty():
        yield lambda _summary: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), transient=True) as bar:
        task = bar.add_task("embedding", total=None)
        yield lambda summary: bar.update(task, total=summary.missing, completed=summary.done)
