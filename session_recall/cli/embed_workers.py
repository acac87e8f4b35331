"""`session-recall embed --workers N`: N processes on this machine, worker `i` enriching
slice `i` of `N` of the sessions (`enrichment.slices`), so a local model gets a core per
worker and no two workers ever take the same event.

Each worker is a process of its own (a local model holds the interpreter while it
runs), with its own client and embedder, made from the same settings. Its summary
comes back on a queue; the command prints one line per slice and exits 1 when any
worker failed or left events undone.
"""

import contextlib
import multiprocessing
import queue
import signal
import threading
from collections.abc import Iterator
from multiprocessing.queues import Queue
from typing import Any

import click

from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.factories import embedder_for
from session_recall.indexer import EnrichmentSummary, enrich, follow
from session_recall.indexer.enrichment import Fixed, Slice, slices_query

# A worker that does not stop within this long after the others is ended.
_JOIN_S = 30.0
# How often the workers are looked at while none reports: one that died says nothing.
_POLL_S = 1.0


def run_workers(settings: Settings, workers: int, *, follow: bool, page_size: int) -> int:
    """Run the workers to the end (a pass each, or until stopped with --follow); the
    exit code."""
    context = multiprocessing.get_context("spawn")
    results: Queue[tuple[int, dict[str, Any] | str]] = context.Queue()
    processes = [
        context.Process(
            target=_work,
            args=(settings, Slice(i, workers), follow, page_size, results),
            name=f"session-recall-embed-{i}",
            daemon=True,
        )
        for i in range(workers)
    ]
    click.echo(f"Enriching with {workers} workers, a slice of the sessions each.", err=True)
    for process in processes:
        process.start()
    previous = signal.signal(signal.SIGTERM, lambda *_: _stop_all(processes))
    failed = False
    try:
        for index, outcome in _outcomes(processes, results):
            if isinstance(outcome, str):
                failed = True
                click.echo(f"slice {index}/{workers}: failed: {outcome}", err=True)
                continue
            summary = EnrichmentSummary.model_validate(outcome)
            failed |= bool(summary.failed or summary.embedder_error)
            click.echo(f"slice {index}/{workers}: {summary.line()}")
    except KeyboardInterrupt:  # the workers got it too, and stop
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        for process in processes:
            process.join(_JOIN_S)
            if process.is_alive():
                process.terminate()
    return 1 if failed else 0


def _outcomes(
    processes: list[Any], results: "Queue[tuple[int, dict[str, Any] | str]]"
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """Each worker's outcome as it comes: its summary, or why it failed; a worker that
    died without one (killed, out of memory) is one that failed."""
    waiting = dict(enumerate(processes))
    while waiting:
        try:
            index, outcome = results.get(timeout=_POLL_S)
        except queue.Empty:
            for index, process in list(waiting.items()):
                if not process.is_alive() and process.exitcode != 0:
                    del waiting[index]
                    yield index, f"the worker ended with exit code {process.exitcode}"
            continue
        waiting.pop(index, None)
        yield index, outcome


def _stop_all(processes: list[Any]) -> None:
    for process in processes:
        if process.is_alive():
            process.terminate()  # SIGTERM: each worker's own handler stops it


def _work(
    settings: Settings,
    piece: Slice,
    keep_following: bool,
    page_size: int,
    results: "Queue[tuple[int, dict[str, Any] | str]]",
) -> None:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        client = make_client(settings)
        embedder = embedder_for(settings)
        alias = settings.index
        if keep_following:
            last: list[EnrichmentSummary] = [EnrichmentSummary()]
            with contextlib.suppress(KeyboardInterrupt):
                follow(client, alias, embedder, stop=stop, page_size=page_size,
                       share=Fixed(piece), on_pass=lambda s: last.__setitem__(0, s))  # fmt: skip
            summary = last[0]
        else:
            summary = enrich(
                client, alias, embedder, page_size=page_size, stop=stop,
                within=slices_query([piece]),
            )  # fmt: skip
        results.put((piece.index, summary.model_dump()))
    except KeyboardInterrupt:
        results.put((piece.index, "stopped"))
    except Exception as err:  # the parent reports it, with the slice
        results.put((piece.index, str(err) or type(err).__name__))
