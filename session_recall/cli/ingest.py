"""`session-recall ingest FILE|-`: NDJSON events into Elasticsearch."""

import contextlib
import functools
import itertools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import click
from elasticsearch import Elasticsearch

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.cli.observe import log_format_option, metrics_for, metrics_port_options
from session_recall.cli.options import build, library_option, limit_options
from session_recall.cli.progress import progress_reporter
from session_recall.cli.refresh import refresh
from session_recall.core.errors import SessionRecallError
from session_recall.core.strict_json import BOM
from session_recall.embeddings import Embedder
from session_recall.factories import embedder_for, enricher_for
from session_recall.indexer import (
    EventLimits,
    IngestSummary,
    RetryPolicy,
    WriterOptions,
    check_outputs,
    ingest,
)
from session_recall.indexer import checkpoint as checkpoints
from session_recall.indexer import enrich as enrich_events
from session_recall.indexer.checkpoint import Position
from session_recall.indexer.chunking import Flush
from session_recall.indexer.errors import PrivilegeMissing, WriteUnavailable
from session_recall.indexer.lines import (
    DEFAULT_ROTATION_QUIET_S,
    Line,
    LineRun,
    follow_file,
    read_finished_file,
    read_stream,
)
from session_recall.observability import EnrichmentTally, LogFormat, exposed, tracing
from session_recall.observability.logs import configure as configure_logs

DEFAULT_DEAD_LETTER = Path("dead-letter.ndjson")
# Enough to see past a byte order mark and leading blank space to the first character.
ARRAY_PEEK_BYTES = 64
# What stops a run with nothing lost: a run of the same command resumes it.
RESUMABLE = (WriteUnavailable, PrivilegeMissing)


@click.command()
@click.argument("source", metavar="FILE|-", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--checkpoint", type=click.Path(dir_okay=False, path_type=Path),
    help="Resume from, and save progress to, this file (a byte offset).",
)  # fmt: skip
@click.option("--follow", is_flag=True, help="Keep reading as FILE grows; survives rotation.")
@click.option(
    "--rotation-quiet", type=click.FloatRange(0), default=DEFAULT_ROTATION_QUIET_S,
    show_default=True, envvar="SESSION_RECALL_ROTATION_QUIET", metavar="SECONDS",
    help="With --follow: after FILE is rotated, read the renamed file until nothing was "
    "added to it for this long, then go on with the new FILE.",
)  # fmt: skip
@click.option(
    "--dead-letter", type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DEAD_LETTER, show_default=True,
    help="Where refused events go, with the reason (NDJSON, appended).",
)  # fmt: skip
@library_option("--chunk-size", WriterOptions, "chunk_events", "Events per bulk request.")
@library_option("--chunk-bytes", WriterOptions, "chunk_bytes", "Bytes per bulk request.")
@library_option("--max-attempts", RetryPolicy, "max_attempts", "Tries per event on 429/5xx.")
@library_option("--max-text-bytes", EventLimits, "max_text_bytes", "Longest text accepted.")
@limit_options("max_age_days", "max_ahead_seconds", "max_new_partitions", "truncate_types")
@click.option(
    "--enrich/--no-enrich", default=True, show_default=True,
    help="Enrich the stored events (stems, context, vectors) once they are stored; "
    "with --follow, all along.",
)  # fmt: skip
@metrics_port_options
@log_format_option
@pass_app
def ingest_command(
    app: AppContext,
    source: str,
    checkpoint: Path | None,
    follow: bool,
    rotation_quiet: float,
    dead_letter: Path,
    chunk_size: int | None,
    chunk_bytes: int | None,
    max_attempts: int | None,
    max_text_bytes: int | None,
    max_age_days: int,
    max_ahead_seconds: int,
    max_new_partitions: int,
    truncate_types: tuple[str, ...],
    enrich: bool,
    metrics_port: int | None,
    metrics_host: str,
    log_format: LogFormat,
) -> None:
    """Store the NDJSON events of FILE (or stdin, with -), one event per line.

    Each event is stored once, however often it is ingested, and is searchable when
    the command returns. Refused lines go to the dead-letter file with the reason.
    Events of a scope erased after their timestamp (replays after `delete`) are
    refused on purpose: counted in the summary, copied nowhere.

    Events are stored at full speed, then enriched in one pass: the stems of each
    event's text and of its session's turns around it, and its vector from the
    configured embedder (SESSION_RECALL_EMBEDDER). With --follow, the enrichment runs
    all along. When the embedder fails, events are stored all the same:
    `session-recall embed` adds the vectors later. memory_search finds an event by its
    own words until it is enriched.

    Exit 0 when every event was stored or refused as erased, 1 when some went to the
    dead-letter file, 2 on a usage error (nothing is read), 3 when Elasticsearch is
    unavailable or not set up (run it again: what was acknowledged is stored).

    With --metrics-port, Prometheus metrics are served while it runs (events received,
    stored, refused and dead-lettered, bulk requests, the enrichment lag).

    \b
    Example:
      session-recall ingest events.ndjson --checkpoint events.ckpt
    """
    if source == "-" and (checkpoint or follow):
        raise click.UsageError("--checkpoint and --follow need a FILE, not stdin.")
    retry = build(RetryPolicy, {"max_attempts": ("--max-attempts", max_attempts)})
    options = build(
        WriterOptions,
        {
            "chunk_events": ("--chunk-size", chunk_size),
            "chunk_bytes": ("--chunk-bytes", chunk_bytes),
            "retry": ("--max-attempts", retry),
            "max_new_partitions": ("--max-new-partitions", max_new_partitions),
        },
    )
    limits = build(
        EventLimits,
        {
            "max_text_bytes": ("--max-text-bytes", max_text_bytes),
            "max_age_days": ("--max-age-days", max_age_days),
            "max_ahead_seconds": ("--max-ahead-seconds", max_ahead_seconds),
            "truncate_types": ("--truncate-types", truncate_types),
        },
    )
    stop = threading.Event()
    tail = (
        functools.partial(follow_file, stop=stop, rotation_quiet=rotation_quiet, runs=True)
        if follow
        else None
    )
    check_outputs(dead_letter, checkpoint)  # a wrong path is named even with the node down
    configure_logs(log_format)
    if follow:
        tracing.configure()  # with the OTEL_* variables: a span per enrichment page
    metrics = metrics_for(app.settings) if metrics_port is not None else None
    passes = EnrichmentTally()
    with (
        exposed(metrics, host=metrics_host, port=metrics_port),
        _input(source, checkpoint, dead_letter, tail) as (lines, start, total),
    ):
        client = app.client
        stopping = _stop_on_signals(stop) if follow else contextlib.nullcontext()
        embedder = embedder_for(app.settings) if enrich else None
        enricher = (
            enricher_for(app.settings, client, embedder=embedder, on_pass=passes.passed)
            if enrich and follow
            else None
        )
        if metrics is not None and enricher is not None:
            metrics.watch_enrichment(passes, enricher)
        alongside = enricher or contextlib.nullcontext()
        with progress_reporter(total=total, start=start.offset) as report, stopping, alongside:
            so_far: list[IngestSummary] = []  # the run's counts, for a run that stops

            def progress(counted: IngestSummary, end: int) -> None:
                so_far[:] = [counted]
                report(counted, end)
                if metrics is not None:
                    metrics.events.follow(counted)

            try:
                summary = ingest(
                    client,
                    app.settings.index,
                    lines,
                    dead_letter=dead_letter,
                    checkpoint_path=checkpoint,
                    start=start,
                    options=options,
                    limits=limits,
                    on_progress=progress,
                    on_refusal=metrics.events.dead_letter if metrics else None,
                    stats=metrics.bulk_stats() if metrics else None,
                )
            except SessionRecallError as err:
                # Never without its summary: what was stored and dead-lettered so far.
                if so_far:
                    click.echo(f"Stopped. So far: {so_far[0].line()}", err=True)
                if checkpoint is None or not isinstance(err, RESUMABLE):
                    raise
                resume = f"Then run the same command to resume from {checkpoint}."
                raise type(err)(err.message, hint=f"{err.hint} {resume}") from None
        refresh(client, app.settings.index)
    if enrich and not follow:
        _enrich(client, app.settings.index, embedder)
    _finish(summary)


def _enrich(client: Elasticsearch, alias: str, embedder: Embedder | None) -> None:
    """One enrichment pass over what is pending, after the events are stored (and
    acknowledged: the checkpoint is saved). A failure here costs no event: the next
    `session-recall embed` carries on."""
    try:
        done = enrich_events(client, alias, embedder)
        refresh(client, alias)
    except SessionRecallError as err:
        click.echo(
            f"Warning: the events are stored, but enriching them failed ({err}); "
            "then run `session-recall embed` to finish.",
            err=True,
        )
        return
    if done.embedder_error:
        click.echo(f"Warning: {done.line()}", err=True)


def _finish(summary: IngestSummary) -> None:
    click.echo(summary.line())
    if not summary.all_accepted:
        sys.exit(1)


# `follow_file` with its stop event and rotation settings bound: (path, start, rotated).
Tail = Callable[..., Iterator[Line | LineRun | Flush]]


@contextmanager
def _input(
    source: str, checkpoint: Path | None, dead_letter: Path, tail: Tail | None
) -> Iterator[tuple[Iterator[Line | LineRun | Flush], Position, int | None]]:
    if source == "-":
        peek = getattr(sys.stdin.buffer, "peek", None)
        _refuse_json_array(peek(ARRAY_PEEK_BYTES) if peek else b"", source)
        yield read_stream(sys.stdin.buffer, runs=True), Position(), None
        return
    path = Path(source)
    try:
        file: BinaryIO = path.open("rb")
    except OSError as err:
        raise click.BadParameter(
            f"cannot read {source}: {err.strerror}", param_hint="FILE"
        ) from None
    with file:
        stat = os.fstat(file.fileno())
        saved = checkpoints.load(checkpoint) if checkpoint else None
        exclude = [p for p in (checkpoint, dead_letter) if p is not None]
        rotated = checkpoints.rotated_file(path, saved, exclude=exclude)
        head: Iterator[Line | LineRun | Flush] = iter(())
        total: int | None = stat.st_size
        if saved is not None and rotated is not None:
            # The rotated file's tail first, under its own inode: the checkpoint stays
            # on it until all of it is acknowledged, so a crash comes back here again.
            click.echo(
                f"{source} was rotated since the checkpoint: finishing {rotated} first.", err=True
            )
            if tail is not None:  # its writer may still append to it: wait until quiet
                yield tail(path, start=saved.offset, rotated=rotated), saved, None
                return
            head = read_finished_file(rotated, start=saved.offset, inode=saved.inode, runs=True)
            start, offset, total = saved, 0, None  # offsets span two files: no bar total
        else:
            offset = checkpoints.resume_offset(saved, inode=stat.st_ino, size=stat.st_size)
            if saved is not None and offset != saved.offset:
                click.echo(
                    f"{source} was replaced or truncated since the checkpoint: starting over.",
                    err=True,
                )
            start = Position(offset=offset, inode=stat.st_ino)
        if offset == 0:
            _refuse_json_array(file.read(ARRAY_PEEK_BYTES), source)
        if tail is not None:
            yield tail(path, start=offset), start, None
        else:
            file.seek(offset)
            rest = read_stream(file, start=offset, inode=stat.st_ino, runs=True)
            yield itertools.chain(head, rest), start, total


def _refuse_json_array(head: bytes, source: str) -> None:
    """A JSON array (a pretty-printed export, say) is refused before anything is read:
    line by line, each of its lines would be dead-lettered as broken JSON."""
    if head.removeprefix(BOM).lstrip().startswith(b"["):
        name = "the input" if source == "-" else source
        raise click.UsageError(
            f"{name} holds a JSON array; ingest reads NDJSON, one event per line. "
            f"Convert it with `jq -c '.[]' {'FILE' if source == '-' else source}`, "
            "or POST the array to /v1/events of `session-recall serve`."
        )


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM end a --follow run cleanly: checkpoint saved, summary printed.
    (A run over a finite input keeps the default: interrupted is a failure, exit 1.)"""
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    for sig in previous:
        signal.signal(sig, lambda *_: stop.set())
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
