"""`session-recall embed`: the enrichment pass over stored events (stems, context, vectors)."""

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from session_recall.cli.context import AppContext, pass_app
from session_recall.cli.options import page_size_option
from session_recall.cli.refresh import refresh
from session_recall.embedders import embedder_for
from session_recall.indexer import EnrichmentSummary, enrich, follow, pending
from session_recall.indexer.enrichment import DEFAULT_PAGE
from session_recall.indexer.layout import require_alias


@click.command("embed")
@click.option(
    "--follow",
    "keep_following",
    is_flag=True,
    help="Keep going: enrich events as they are stored (beside `ingest`), until Ctrl-C.",
)
@click.option(
    "--status",
    "status_only",
    is_flag=True,
    help="Only print how many stored events await enrichment (the lag), and exit.",
)
@click.option("--backfill", is_flag=True, hidden=True, help="The former name of one pass.")
@page_size_option(DEFAULT_PAGE, "Events enriched and updated per request.")
@pass_app
def embed(
    app: AppContext, keep_following: bool, status_only: bool, backfill: bool, page_size: int
) -> None:
    """Enrich stored events with stems, context and vectors, for memory_search.

    Each event gains the English stems of its text and of its text with its session's
    turns around it (what keyword recall matches word forms and context on), and the
    configured embedder's vector (SESSION_RECALL_EMBEDDER).

    `ingest` stores events at full speed and runs one pass when it is done; `serve`
    runs the pass in the background. Run `embed --follow` beside a long-running
    `ingest` (stdin, --follow), after a model change, or after an outage of the
    embedder. Until an event is enriched, memory_search finds it by its own words.

    Idempotent and resumable: run it again at any time, it carries on where it
    stopped. Exit 1 when some events could not be updated.

    \b
    Examples:
      session-recall embed
      session-recall embed --follow
      session-recall embed --status
    """
    del backfill  # one pass is what it always did
    embedder = embedder_for(app.settings)
    client = app.client
    alias = app.settings.index
    require_alias(client, alias)
    if status_only:
        click.echo(f"{pending(client, alias, embedder)} event(s) await enrichment.")
        return
    if keep_following:
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        click.echo("Enriching events as they are stored; Ctrl-C stops.", err=True)
        try:
            follow(client, alias, embedder, stop=stop, page_size=page_size, on_pass=_report)
        except KeyboardInterrupt:
            stop.set()
        click.echo(f"Stopped; {pending(client, alias, embedder)} event(s) await enrichment.")
        return
    with _progress() as report:
        summary = enrich(client, alias, embedder, page_size=page_size, on_progress=report)
    refresh(client, alias)
    click.echo(summary.line())
    if summary.failed or summary.embedder_error:
        sys.exit(1)


def _report(summary: EnrichmentSummary) -> None:
    if summary.missing:
        click.echo(summary.line(), err=True)


@contextmanager
def _progress() -> Iterator[Callable[[EnrichmentSummary], None]]:
    """A bar on a terminal (events done of those pending at the start); nothing else."""
    if not sys.stderr.isatty():
        yield lambda _summary: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), transient=True) as bar:
        task = bar.add_task("enriching", total=None)
        yield lambda summary: bar.update(task, total=summary.missing, completed=summary.done)
