"""`session-recall embed`: the enrichment pass over stored events (stems, context, vectors)."""

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.cli.embed_workers import run_workers
from session_recall.cli.observe import log_format_option, metrics_for, metrics_port_options
from session_recall.cli.options import page_size_option
from session_recall.cli.refresh import refresh
from session_recall.embeddings import Embedder
from session_recall.factories import embedder_for
from session_recall.indexer import EnrichmentSummary, enrich, follow, pending, refused
from session_recall.indexer.enrichment import (
    DEFAULT_PAGE,
    Fixed,
    Leased,
    Slice,
    drop_model,
    stored_models,
)
from session_recall.indexer.layout import require_alias
from session_recall.observability import EnrichmentTally, LogFormat, exposed, tracing
from session_recall.observability.logs import configure as configure_logs


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
@click.option(
    "--slice",
    "piece",
    metavar="I/N",
    help="Enrich only slice I of N of the sessions (0/2 and 1/2 are the two halves): "
    "machines that share an alias each take one. Without it, a --follow shares the work "
    "with the other followers of the alias by itself (leases).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Processes on this machine, each enriching a slice of its own (one core each, "
    "for a local model).",
)
@click.option(
    "--drop-model",
    "drop",
    metavar="MODEL_ID",
    help="Remove this model's vectors from every event (after a model change, once the "
    "new model's are in), and exit. `embed --status` names the models stored.",
)
@click.option("--backfill", is_flag=True, hidden=True, help="The former name of one pass.")
@page_size_option(DEFAULT_PAGE, "Events enriched and updated per request.")
@metrics_port_options
@log_format_option
@pass_app
def embed(
    app: AppContext,
    keep_following: bool,
    status_only: bool,
    piece: str | None,
    workers: int,
    drop: str | None,
    backfill: bool,
    page_size: int,
    metrics_port: int | None,
    metrics_host: str,
    log_format: LogFormat,
) -> None:
    """Enrich stored events with stems, context and vectors, for memory_search.

    Each event gains the English stems of its text and of its text with its session's
    turns around it (what keyword recall matches word forms and context on), and the
    configured embedder's vector (SESSION_RECALL_EMBEDDER).

    `ingest` stores events at full speed and runs one pass when it is done; `serve`
    runs the pass in the background. Run `embed --follow` beside a long-running
    `ingest` (stdin, --follow), after a model change, or after an outage of the
    embedder. Until an event is enriched, memory_search finds it by its own words.

    Several enrichers share an alias by slices of its sessions: `--workers N` runs N
    processes here, `--slice I/N` takes one slice (one per machine), and followers
    (`--follow`, serve's replicas) share by themselves.

    Idempotent and resumable: run it again at any time, it carries on where it
    stopped. Exit 1 when some events could not be updated. With --follow and
    --metrics-port, Prometheus metrics are served (the lag, passes, refused texts).

    \b
    Examples:
      session-recall embed
      session-recall embed --follow
      session-recall embed --status
      session-recall embed --workers 2
      session-recall embed --drop-model wordllama-l2-supercat-64-v1
    """
    del backfill  # one pass is what it always did
    share = _share(piece, workers)
    embedder = embedder_for(app.settings)
    client = app.client
    alias = app.settings.index
    require_alias(client, alias)
    if drop is not None:
        _drop(app, drop, embedder)
        return
    if workers > 1 and not status_only:
        sys.exit(run_workers(app.settings, workers, follow=keep_following, page_size=page_size))
    if status_only:
        line = f"{pending(client, alias, embedder)} event(s) await enrichment"
        if count := refused(client, alias, embedder):
            line += f"; {count} text(s) the model refused are kept without its vector"
        click.echo(line + ".")
        if stored := stored_models(client, alias):
            click.echo(f"Vectors stored, by model: {', '.join(sorted(stored))}.")
        return
    if keep_following:
        configure_logs(log_format)
        tracing.configure()  # with the OTEL_* variables: a span per page
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        metrics = metrics_for(app.settings) if metrics_port is not None else None
        passes = EnrichmentTally()
        if metrics is not None:
            metrics.watch_enrichment(passes)
        click.echo("Enriching events as they are stored; Ctrl-C stops.", err=True)
        try:
            with exposed(metrics, host=metrics_host, port=metrics_port):
                follow(
                    client, alias, embedder, stop=stop, page_size=page_size,
                    on_pass=passes.then(_report), on_progress=passes.progress,
                    on_failure=passes.failed, share=share or Leased(client, alias),
                )  # fmt: skip
        except KeyboardInterrupt:
            stop.set()
        click.echo(f"Stopped; {pending(client, alias, embedder)} event(s) await enrichment.")
        return
    within = share.take() if share else None
    with _progress() as report:
        summary = enrich(
            client, alias, embedder, page_size=page_size, on_progress=report, within=within
        )
    refresh(client, alias)
    click.echo(summary.line())
    if summary.failed or summary.embedder_error:
        sys.exit(1)


def _drop(app: AppContext, model_id: str, embedder: Embedder | None) -> None:
    if embedder is not None and embedder.model_id == model_id:
        raise click.UsageError(
            f"{model_id!r} is the model in use (SESSION_RECALL_EMBEDDER): configure the new "
            "one, let `embed` fill its vectors, then drop the old."
        )
    stored = stored_models(app.client, app.settings.index)
    if model_id not in stored:
        known = ", ".join(sorted(stored)) or "none"
        raise click.BadParameter(
            f"no event holds vectors of {model_id!r} (stored: {known}).",
            param_hint="--drop-model",
        )
    dropped = drop_model(app.client, app.settings.index, model_id)
    click.echo(f"Removed the vectors of {model_id!r} from {dropped} event(s).")


def _share(piece: str | None, workers: int) -> Fixed | None:
    if piece is None:
        return None
    if workers > 1:
        raise click.UsageError("--slice and --workers are one or the other: a worker is a slice.")
    try:
        return Fixed(Slice.parse(piece))
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--slice") from None


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
