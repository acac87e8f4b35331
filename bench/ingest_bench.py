"""Ingest throughput: `session-recall ingest FILE` against raw `_bulk` with the same bodies.

Ours runs as the command a user runs, in a subprocess; its wall time is measured from
start to exit (interpreter start-up included), and its resident memory, children
included, is sampled every 20 ms.

The raw side is the floor any client could reach on this node: the same documents,
`_id`s, routing, `create` op type, monthly partitions and chunks as the indexer's, serialized
into `_bulk` bodies before the clock starts, then posted one chunk after the other over
one keep-alive connection with httpx, which is how the indexer sends them (sequentially).
"""

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import psutil
from elasticsearch import Elasticsearch

from session_recall.core.partitions import DEFAULT_GRANULARITY, Granularity, partition_of
from session_recall.indexer import tombstone_index
from session_recall.indexer.chunking import chunks
from session_recall.indexer.document import Document, to_document
from session_recall.indexer.parsing import Parsed, parse_line
from session_recall.indexer.writer import WriterOptions

_SAMPLE_EVERY_S = 0.02


@dataclass
class IngestRun:
    events: int
    seconds: float
    peak_rss_bytes: int | None = None
    output: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds

    def to_json(self) -> dict[str, Any]:
        return {
            "events": self.events,
            "seconds": self.seconds,
            "events_per_s": self.events_per_s,
            "peak_rss_mb": None if self.peak_rss_bytes is None else self.peak_rss_bytes / 2**20,
            **self.extra,
        }


class PeakRss:
    """Samples the resident memory of a process and all its descendants; keeps the peak."""

    def __init__(self, pid: int) -> None:
        self._process = psutil.Process(pid)
        self._stop = threading.Event()
        self.peak = 0
        self.samples = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "PeakRss":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                tree = [self._process, *self._process.children(recursive=True)]
                total = 0
                for process in tree:
                    with contextlib.suppress(psutil.NoSuchProcess):
                        total += process.memory_info().rss
            except psutil.NoSuchProcess:
                return
            self.peak = max(self.peak, total)
            self.samples += 1
            self._stop.wait(_SAMPLE_EVERY_S)


def session_recall_command() -> list[str]:
    """The installed `session-recall` script next to this interpreter (no shim in between,
    so the process measured is the command itself)."""
    beside = Path(sys.executable).with_name("session-recall")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("session-recall")
    if found is None:
        raise RuntimeError("session-recall is not installed; run pip install -e .")
    return [found]


def run_ours(
    es_url: str,
    alias: str,
    path: Path,
    events: int,
    home: Path,
    *,
    embedder: str = "none",
    enrich: bool = False,
) -> IngestRun:
    """`embedder` is SESSION_RECALL_EMBEDDER for the run: none by default, so that ours
    and raw `_bulk` store the same documents; `bench.semantic` runs it with static.
    Without `enrich`, the command stores and stops (`--no-enrich`): what it
    acknowledges, timed apart from the enrichment pass (`run_enrichment`)."""
    dead_letter = home / f"{alias}-dead-letter.ndjson"
    command = _ours(es_url, alias, home, "ingest", str(path), "--dead-letter", str(dead_letter))
    command += [] if enrich else ["--no-enrich"]
    return run_command(command, events, env={"SESSION_RECALL_EMBEDDER": embedder})


# An event of a user the dataset never names, erased on its own before a run: the
# alias then has per-event tombstones, which every write must consider.
ERASED_USER, ERASED_EVENT = "bench-erased-user", "bench-erased-event"


def erase_an_event(es_url: str, alias: str, home: Path) -> None:
    """Erase one event of `ERASED_USER` by its id, as `session-recall delete --event`
    does: what an alias has after its first per-event erasure."""
    run_command(
        _ours(es_url, alias, home, "delete", "--user", ERASED_USER, "--event", ERASED_EVENT), 1
    )


def tombstone_reads(client: Elasticsearch, alias: str) -> int:
    """Documents the alias's tombstone index has served by id so far (each id of an
    `mget` counts one): what writes cost it, whatever the machine's speed."""
    stats = client.indices.stats(index=tombstone_index(alias), metric="get")
    return int(stats["_all"]["total"]["get"]["total"])


def run_enrichment(es_url: str, alias: str, events: int, home: Path, *, embedder: str) -> IngestRun:
    """`session-recall embed`: one enrichment pass over what `alias` holds."""
    command = _ours(es_url, alias, home, "embed")
    return run_command(command, events, env={"SESSION_RECALL_EMBEDDER": embedder})


def run_compaction(es_url: str, alias: str, events: int, home: Path) -> IngestRun:
    """`session-recall compact`: the partitions of periods that ended, merged."""
    return run_command(_ours(es_url, alias, home, "compact"), events)


def _ours(es_url: str, alias: str, home: Path, *args: str) -> list[str]:
    """A `session-recall` command line on `alias` of the node at `es_url`."""
    return [
        *session_recall_command(),
        "--es-url",
        es_url,
        "--index",
        alias,
        "--home",
        str(home),
        *args,
    ]


def run_loader(
    es_url: str, alias: str, path: Path, events: int, partition: Granularity = DEFAULT_GRANULARITY
) -> IngestRun:
    """The plain loader (`bench.loader`): what a user would write instead of ours."""
    command = [sys.executable, "-m", "bench.loader", "--es-url", es_url, "--index", alias]
    command += ["--partition", partition]
    return run_command([*command, str(path)], events)


def run_floor(
    es_url: str, path: Path, events: int, partition: Granularity = DEFAULT_GRANULARITY
) -> IngestRun:
    """`bench.floor`: the same documents from a bare loop with no guarantees, the least
    CPU per event a Python loader spends on this machine (see its docstring)."""
    command = [sys.executable, "-m", "bench.floor", "--es-url", es_url]
    return run_command([*command, "--partition", partition, str(path)], events)


def run_command(command: list[str], events: int, env: dict[str, str] | None = None) -> IngestRun:
    """Run `command` to its end: its wall time, peak RSS (children included) and CPU
    time, per event too."""
    started = time.perf_counter()
    with (
        subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            cwd=Path(__file__).resolve().parents[1],
        ) as process,
        PeakRss(process.pid) as rss,
    ):
        assert process.stdout is not None
        output = process.stdout.read()
        # wait4 rather than wait: the kernel's account of the child's CPU time.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    text = output.decode("utf-8", "replace").strip()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:3])} failed ({process.returncode}):\n{text}")
    cpu_s = usage.ru_utime + usage.ru_stime
    return IngestRun(
        events=events,
        seconds=seconds,
        peak_rss_bytes=rss.peak,
        output=text.splitlines()[-1] if text else "",
        extra={
            "rss_samples": rss.samples,
            "cpu_s": cpu_s,
            "cpu_us_per_event": cpu_s / events * 1e6,
        },
    )


@dataclass(frozen=True)
class PreparedBulk:
    path: Path
    spans: list[tuple[int, int]]  # (offset, length) of each chunk's body in `path`
    events: int
    chunk_events: int


def prepare_bulk(
    source: Path, alias: str, out: Path, partition: Granularity = DEFAULT_GRANULARITY
) -> PreparedBulk:
    """Serialize every event of `source` into `_bulk` bodies, chunked as the indexer
    chunks, and write them to `out`; each event goes to its `partition` period's index."""
    options = WriterOptions()

    def documents() -> Any:
        with source.open("rb") as lines:
            for line in lines:
                parsed = parse_line(line)
                if isinstance(parsed, Parsed):
                    stamp = parsed.event.timestamp
                    index = partition_of(alias, stamp, partition).index
                    yield to_document(parsed.event, index=index)
                elif parsed is not None:
                    raise ValueError(f"the generator wrote an invalid event: {parsed.reason}")

    spans: list[tuple[int, int]] = []
    events = 0
    offset = 0
    with out.open("wb") as sink:
        for chunk in chunks(
            documents(),
            max_count=options.chunk_events,
            max_bytes=options.chunk_bytes,
            size=_size,
        ):
            body = b"".join(orjson.dumps(d.header) + b"\n" + d.body + b"\n" for d in chunk)
            sink.write(body)
            spans.append((offset, len(body)))
            offset += len(body)
            events += len(chunk)
    return PreparedBulk(out, spans, events, options.chunk_events)


def _size(document: Document) -> int:
    return document.size


def run_raw(es_url: str, prepared: PreparedBulk) -> IngestRun:
    """Post the prepared bodies; fail if any item was not created."""
    failed = 0
    with (
        prepared.path.open("rb") as bodies,
        httpx.Client(base_url=es_url, timeout=120) as client,
    ):
        headers = {"content-type": "application/x-ndjson"}
        started = time.perf_counter()
        for offset, length in prepared.spans:
            bodies.seek(offset)
            response = client.post(
                "/_bulk",
                content=bodies.read(length),
                headers=headers,
            )
            response.raise_for_status()
            answer = orjson.loads(response.content)
            if answer["errors"]:
                failed += sum(
                    1 for item in answer["items"] if next(iter(item.values()))["status"] >= 300
                )
        seconds = time.perf_counter() - started
    if failed:
        raise RuntimeError(f"raw _bulk: {failed} item(s) were not created")
    return IngestRun(events=prepared.events, seconds=seconds, extra={"chunks": len(prepared.spans)})
