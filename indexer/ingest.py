"""`ingest`: NDJSON lines in, events stored, refusals dead-lettered, progress saved.

The checkpoint only moves past a line once its event is resolved: acknowledged by
Elasticsearch, or written (and fsynced) to the dead-letter file.
"""

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from session_recall.core import strict_json
from session_recall.embeddings import Embedder
from session_recall.indexer import checkpoint, collector, native
from session_recall.indexer.bulk import BulkStats
from session_recall.indexer.checkpoint import Position
from session_recall.indexer.chunking import Flush
from session_recall.indexer.deadletter import DeadLetter
from session_recall.indexer.filling import TOO_LONG, Filler
from session_recall.indexer.lines import DEFAULT_MAX_LINE_BYTES, Line, LineRun
from session_recall.indexer.long_lines import LongLine
from session_recall.indexer.parsing import EventLimits, Parsed, Rejected, parse_line
from session_recall.indexer.paths import check_writable
from session_recall.indexer.progress import Progress
from session_recall.indexer.results import SCOPE_ERASED, IngestSummary, Status
from session_recall.indexer.writer import Submission, Writer, WriterOptions

_REJECTED = Status.REJECTED
# Saving is an fsync or two; every half second keeps a crash's replay short without
# making the disk the bottleneck.
CHECKPOINT_EVERY_S = 0.5


def check_outputs(dead_letter: Path, checkpoint_path: Path | None) -> None:
    """Raise `UnwritablePath` unless the dead-letter file and the checkpoint can be
    written. `ingest` checks this itself; a caller may check it earlier, before it
    connects, so that a wrong path is named even with the node down."""
    check_writable(
        dead_letter,
        what="dead-letter file",
        hint="Point the dead letters (--dead-letter) at a file in an existing, writable folder.",
        replaced=False,
    )
    if checkpoint_path is not None:
        check_writable(
            checkpoint_path,
            what="checkpoint",
            hint="Point the checkpoint (--checkpoint) at a file in an existing, writable folder.",
            replaced=True,
        )


def ingest(
    client: Elasticsearch,
    alias: str,
    lines: Iterable[Line | LineRun | Flush],
    *,
    dead_letter: Path,
    checkpoint_path: Path | None = None,
    start: Position | None = None,
    options: WriterOptions | None = None,
    limits: EventLimits | None = None,
    on_progress: Callable[[IngestSummary, int], None] | None = None,
    embedder: Embedder | None = None,
    on_refusal: Callable[[str], None] | None = None,
    stats: BulkStats | None = None,
) -> IngestSummary:
    """Store every event of `lines` and return the counts.

    `start` is where `lines` begins (the checkpoint it resumed from). With an
    `embedder`, events are stored with their vectors. Raises
    `WriteUnavailable` when Elasticsearch stays unavailable; the checkpoint then
    holds the last position safe to resume from; `PrivilegeMissing` (the checkpoint
    likewise) when the credential may not store an event, which is not the event's
    fault, so it is not dead-lettered. Raises `UnwritablePath`, before
    anything is read, when `dead_letter` or `checkpoint_path` cannot be written.

    `on_refusal` is told the reason of each event dead-lettered, as it is; `stats`
    counts the bulk requests' retries and 429s as they happen (both for metrics).
    """
    check_outputs(dead_letter, checkpoint_path)
    summary = IngestSummary(dead_letter=dead_letter)
    start = start or Position()
    # A line's ticket is all its submission carries: the line itself (its text for a
    # refusal's dead letter, its number, the position after it) is kept by `progress`,
    # which holds it anyway. A tuple or a parsed copy per event in flight cost more
    # than their own making: each is an object more in memory that no cache holds.
    progress: Progress[Line] = Progress(Line(b"", 0, start.offset, start.inode))
    writer = Writer(
        client,
        alias,
        options=options,
        embedder=embedder,
        stop_when_forbidden="ingest",
        stats=stats,
    )
    if checkpoint_path is not None and start.inode is not None:
        # At once: a run killed before its first acknowledgement, with the file rotated
        # meanwhile, still finds the file it was reading, by its inode.
        checkpoint.save(checkpoint_path, start)
    saved = progress.committed
    last_save = time.monotonic()

    def save(force: bool = False) -> None:
        nonlocal saved, last_save
        due = force or time.monotonic() - last_save >= CHECKPOINT_EVERY_S
        if checkpoint_path is None or not due or progress.committed is saved:
            return
        sink.sync()  # dead letters first: the checkpoint must not pass unsaved refusals
        committed = progress.committed
        checkpoint.save(checkpoint_path, Position(offset=committed.end, inode=committed.inode))
        saved, last_save = committed, time.monotonic()

    idle = False  # the input has nothing more for now: save as soon as all is resolved

    def refuse(original: Any, number: int, reason: str | None) -> None:
        sink.write(original, f"line {number}: {reason}")
        if on_refusal is not None:
            on_refusal(reason or "")

    def submissions() -> Iterator[Submission | Flush]:
        nonlocal idle
        for line in expanded():
            if isinstance(line, Flush):
                idle = True
                save(force=progress.unresolved == 0)
                yield line
                continue
            idle = False
            if line.too_long:
                parsed: Parsed | Rejected | None = Rejected(_long(line), TOO_LONG)
            else:
                parsed = parse_line(line.data, limits)
            ticket = progress.open(line)
            if parsed is None:
                progress.resolve(ticket)
                continue
            if isinstance(parsed, Rejected):
                summary.count_read(rejected=True)
                refuse(parsed.original, line.number, parsed.reason)
                progress.resolve(ticket)
                save()
            else:
                summary.count_read()
                yield Submission(parsed.event, token=ticket)

    if embedder is None and native.available():
        # Lines a block at a time, no Python object per event (see `native`).
        with DeadLetter(dead_letter) as sink, collector.tuned_for_load():
            try:
                _ingest_batches(writer, lines, limits, refuse, summary, progress, save, on_progress)
            finally:
                summary.dead_lettered = sink.count
                summary.retries, summary.throttled = writer.stats.retries, writer.stats.throttled
                save(force=True)
        return summary

    def expanded() -> Iterator[Line | Flush]:
        for item in lines:
            if isinstance(item, LineRun):
                yield from item.lines()
            else:
                yield item

    with DeadLetter(dead_letter) as sink, collector.tuned_for_load():
        try:
            # A chunk's results at once: what is per chunk here (reporting, saving)
            # would cost more per event than the event's own bookkeeping.
            for chunk in writer.write_chunks(submissions()):
                results = [written.result for written in chunk]
                summary.count_all(results)
                for written, result in zip(chunk, results, strict=True):
                    if result.status is _REJECTED and result.reason != SCOPE_ERASED:
                        # An erased scope's events are refused without a copy anywhere.
                        line = progress.item(written.submission.token)
                        # As it was received: the line parsed before, so it parses.
                        refuse(strict_json.loads(line.data), line.number, result.reason)
                progress.resolve_all([written.submission.token for written in chunk])
                if on_progress is not None:
                    on_progress(summary, progress.committed.end)
                save(force=idle and progress.unresolved == 0)
        finally:
            summary.dead_lettered = sink.count
            summary.retries, summary.throttled = writer.stats.retries, writer.stats.throttled
            summary.without_vectors = writer.without_vectors
            save(force=True)
    return summary


def _ingest_batches(
    writer: Writer,
    lines: Iterable[Line | LineRun | Flush],
    limits: EventLimits | None,
    dead_letter: Callable[[Any, int, str | None], None],
    summary: IngestSummary,
    progress: Progress[Line],
    save: Callable[..., None],
    on_progress: Callable[[IngestSummary, int], None] | None,
) -> None:
    """`ingest`'s loop over native batches. A batch covers a stretch of input lines:
    its events, and the lines before them that were blank or refused (dead-lettered at
    once); its end is checkpointed once it is written. Lines the core declines are
    judged one by one by the Python path, and stored in the batch when valid."""
    filler: Filler | None = None
    taken: deque[int] = deque()  # the tickets of the batches written, in order
    inode: int | None = None
    last_end = progress.committed.end
    idle = False  # as in `ingest`

    def take(end: int | None = None) -> Any:
        nonlocal last_end
        assert filler is not None  # a batch is taken once lines were fed
        batch = filler.builder.take()
        summary.count_read(events=len(batch))
        stop = batch.end if end is None else end
        taken.append(progress.open(Line(b"", 0, stop, inode)))
        last_end = stop
        return batch

    def refuse(original: Any, number: int, reason: str, event_id: str | None = None) -> None:
        summary.count_read(rejected=True)
        dead_letter(original, number, reason)

    def pending() -> bool:
        """Lines were read since the last batch taken (events, or refused or blank)."""
        return filler is not None and bool(
            len(filler.builder) or filler.builder.position != last_end
        )

    def batches() -> Iterator[Any]:
        nonlocal filler, inode, idle
        for item in lines:
            if isinstance(item, Flush):
                idle = True
                if pending():
                    yield take()
                save(force=progress.unresolved == 0)
                yield item
                continue
            idle = False
            if filler is None:
                limit = item.max_line_bytes if isinstance(item, LineRun) else DEFAULT_MAX_LINE_BYTES
                builder = writer.batch_builder(limits=limits, max_line_bytes=limit)
                filler = Filler(writer, builder, limits, refuse=refuse, take=take)
            builder = filler.builder
            inode = item.inode
            if isinstance(item, Line):
                builder.position, builder.number = item.end, item.number
                if item.too_long:
                    refuse(_long(item), item.number, TOO_LONG)
                else:
                    yield from filler.line(item.data, item.number, item.end - len(item.data) - 1)
                continue
            builder.position, builder.number = item.position, item.number
            yield from filler.region(item.data, item.start, item.end)
        if pending():
            yield take()

    for batch, results in writer.write_batches(batches()):
        summary.count_batch(len(batch), results.values())
        for position, result in results.items():
            if result.status is _REJECTED and result.reason != SCOPE_ERASED:
                # As it was received: the line parsed before, so it parses.
                original = strict_json.loads(batch.source(position))
                dead_letter(original, batch.line(position), result.reason)
        progress.resolve(taken.popleft())
        if on_progress is not None:
            on_progress(summary, progress.committed.end)
        save(force=idle and progress.unresolved == 0)


def _long(line: Line) -> LongLine:
    """What the dead-letter file keeps of a line too long (`long_lines`)."""
    return LongLine(line.start, line.head)
