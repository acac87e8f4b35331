"""A progress bar on a terminal, nothing otherwise (logs and pipes stay clean)."""

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from session_recall.indexer import IngestSummary

# Redrawing more often than this costs more than it tells.
REFRESH_S = 0.2

Report = Callable[[IngestSummary, int], None]


@contextmanager
def progress_reporter(*, total: int | None, start: int = 0) -> Iterator[Report]:
    if not sys.stderr.isatty():
        yield lambda _summary, _offset: None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn()]
    if total is not None:
        columns += [DownloadColumn(), TimeRemainingColumn()]
    last = 0.0
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("ingesting", total=total, completed=start)

        def report(summary: IngestSummary, offset: int) -> None:
            nonlocal last
            if time.monotonic() - last < REFRESH_S:
                return
            last = time.monotonic()
            stored = summary.indexed + summary.already_present
            text = f"{stored} stored, {summary.rejected} rejected"
            bar.update(task, completed=offset, description=text)

        yield report
