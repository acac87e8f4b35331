"""NDJSON into native batches: the core reads the lines it is sure of, the Python path
judges every line it declines.

Shared by `ingest` (files and stdin, a block of lines at a time) and `serve` (a
request body at once). A declined line is parsed by `parse_line`: refused, it goes to
the caller's `refuse`, in the Python path's words; valid, its action is made by the
writer and pushed into the batch, so the two paths store the same bytes.
"""

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from session_recall.indexer import native
from session_recall.indexer.lines import HEAD_BYTES
from session_recall.indexer.long_lines import LongLine
from session_recall.indexer.parsing import EventLimits, Rejected, parse_line
from session_recall.indexer.results import EventResult, Status, refusal
from session_recall.indexer.scope import scope_ids_of
from session_recall.indexer.writer import Writer

if TYPE_CHECKING:
    from session_recall_native import Batch, Builder

TOO_LONG = "the line is too long to be an event; it was skipped"


class Refuse(Protocol):
    def __call__(
        self, original: Any, number: int, reason: str, event_id: str | None = None
    ) -> None: ...


class Filler:
    """Feeds lines to `builder`. `refuse(original, number, reason, event_id)` hears of
    each line refused (`original`: what it parsed to, or its text), `take(before)`
    takes a full batch: `before` is the input offset where the batch ends, None for
    where the builder stands. Each method yields the batches taken."""

    def __init__(
        self,
        writer: Writer,
        builder: "Builder",
        limits: EventLimits | None,
        *,
        refuse: Refuse,
        take: Callable[[int | None], "Batch"],
    ) -> None:
        self.builder = builder
        self._writer, self._limits = writer, limits
        self._refuse, self._take = refuse, take

    def region(self, data: bytes, start: int, end: int) -> Iterator["Batch"]:
        """The lines of `data[start:end]`, from the builder's position and line number."""
        builder = self.builder
        at = start
        while True:
            what, line_start, line_end, at = builder.feed(data, at, end)
            if what == native.DONE:
                return
            if what == native.FULL:
                yield self._take(None)
                continue
            before = builder.position - (at - line_start)
            if what == native.TOO_LONG:
                head = data[line_start : min(line_end, line_start + HEAD_BYTES)]
                self._refuse(LongLine(before, head), builder.number, TOO_LONG)
            else:
                yield from self.line(data[line_start:line_end], builder.number, before)

    def line(self, data: bytes, number: int, before: int) -> Iterator["Batch"]:
        """One line the core left to the Python path (line `number`, starting at the
        input offset `before`); yields a full batch first when its event does not fit
        in the pending one."""
        parsed = parse_line(data, self._limits)
        if parsed is None:
            return
        if isinstance(parsed, Rejected):
            self._refuse(parsed.original, number, parsed.reason)
            return
        event = parsed.event
        document = self._writer.document(event)
        if isinstance(document, EventResult):
            self._refuse(parsed.original, number, str(document.reason), event.event_id)
            return
        if not self.builder.room_for(document.size):
            yield self._take(before)
        self.builder.push(
            header=document.header_json,
            body=document.body,
            event_id=event.event_id,
            nanos=event.timestamp.nanos,
            scopes=list(scope_ids_of(event)),
            index=document.index,
            source=data,
        )


@dataclass
class Filled:
    """A request body's events as native batches, and its lines refused (by line
    number)."""

    batches: list["Batch"] = field(default_factory=list)
    refused: dict[int, EventResult] = field(default_factory=dict)

    def __len__(self) -> int:
        return sum(len(batch) for batch in self.batches) + len(self.refused)

    def results(self, answers: Sequence[dict[int, EventResult]]) -> list[EventResult]:
        """One result per event, in the body's order, from each batch's `answers` (its
        events not indexed, by position: every other one was)."""
        numbered: list[tuple[int, EventResult]] = []
        indexed = Status.INDEXED
        for batch, answer in zip(self.batches, answers, strict=True):
            for position, (number, event_id) in enumerate(
                zip(batch.lines(), batch.event_ids(), strict=True)
            ):
                result = answer.get(position) if answer else None
                numbered.append((number, result or EventResult(indexed, event_id)))
        if self.refused:
            numbered.extend(self.refused.items())
            numbered.sort(key=lambda item: item[0])
        return [result for _, result in numbered]


def fill(writer: Writer, data: bytes, limits: EventLimits | None) -> Filled:
    """The lines of `data` (a whole request body) as batches of at most the writer's
    chunk bounds. Raises `NativeCoreMissing` when the native core is not available; reads
    the alias's layout first unless `writer.layout_known`."""
    filled = Filled()

    def refuse(original: Any, number: int, reason: str, event_id: str | None = None) -> None:
        filled.refused[number] = refusal(original, reason, event_id)

    builder = writer.batch_builder(limits=limits, max_line_bytes=len(data))
    filler = Filler(writer, builder, limits, refuse=refuse, take=lambda _end: builder.take())
    filled.batches.extend(filler.region(data, 0, len(data)))
    if len(builder):
        filled.batches.append(builder.take())
    return filled
