"""Events per second of `session-recall ingest` against raw `_bulk`, and the ingest's
peak memory, on N small events (100k by default).

    python bench/ingest_vs_bulk.py --es-url http://127.0.0.1:9200 [--events 100000]

- ours: the `session-recall ingest FILE` command in a subprocess, timed from spawn to
  exit (interpreter start-up included); its resident memory is sampled every 10 ms.
- library: `indexer.ingest()` in this process, so without the start-up.
- raw: the same documents (same `_id`s, routing, `create`, `require_alias`, 1,000 per
  request) serialized into `_bulk` bodies before the clock starts, then posted one
  after the other over one keep-alive httpx connection. No validation, no tombstone
  checks, no checkpoint: the floor any client could reach on this node.

Each side writes into an alias of its own, named bench-ivb-<run>-..., deleted at the end.
"""

import argparse
import io
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import orjson
import psutil

from indexer import WriterOptions, ingest, parse_line, read_stream, to_document
from indexer.chunking import chunks
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.templates import install

CLI = [sys.executable, "-c", "from session_recall.cli import main; main()"]


def small_events(count: int) -> bytes:
    out = io.BytesIO()
    for i in range(count):
        seconds, fraction = divmod(i, 1000)
        event = {
            "userId": f"user-{i % 100}",
            "sessionId": f"session-{i // 50}",
            "timestamp": f"2026-07-01T{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:"
            f"{seconds % 60:02d}.{fraction:03d}Z",
            "type": "user_message" if i % 2 else "assistant_message",
            "text": f"message number {i}: can we move the budget review to Thursday?",
        }
        out.write(orjson.dumps(event) + b"\n")
    return out.getvalue()


def run_ours(es_url: str, alias: str, source: Path, work: Path) -> tuple[float, int, str]:
    command = [*CLI, "--es-url", es_url, "--index", alias, "ingest", str(source)]
    command += ["--dead-letter", str(work / "dead.ndjson")]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak, stop = 0, threading.Event()

    def sample() -> None:
        nonlocal peak
        watched = psutil.Process(process.pid)
        while not stop.is_set():
            try:
                peak = max(peak, watched.memory_info().rss)
            except psutil.NoSuchProcess:
                return
            stop.wait(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    output = process.communicate()[0].decode().strip()
    seconds = time.perf_counter() - started
    stop.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"ingest failed ({process.returncode}): {output}")
    return seconds, peak, output


def run_library(es_url: str, alias: str, data: bytes, work: Path) -> float:
    client = make_client(Settings(ELASTICSEARCH_URL=es_url))
    started = time.perf_counter()
    summary = ingest(client, alias, read_stream(io.BytesIO(data)), dead_letter=work / "d2")
    seconds = time.perf_counter() - started
    client.close()
    assert summary.indexed == summary.read, summary
    return seconds


def run_raw(es_url: str, alias: str, data: bytes) -> float:
    options = WriterOptions()
    documents = (
        to_document(p.event, index=alias) for line in data.splitlines() if (p := parse_line(line))
    )
    bodies = [
        b"".join(orjson.dumps(d.header) + b"\n" + d.body + b"\n" for d in chunk)
        for chunk in chunks(
            documents,
            max_count=options.chunk_events,
            max_bytes=options.chunk_bytes,
            size=lambda d: d.size,
        )
    ]
    headers = {"content-type": "application/x-ndjson"}
    with httpx.Client(base_url=es_url, timeout=120) as client:
        started = time.perf_counter()
        for body in bodies:
            response = client.post(
                "/_bulk", params={"require_alias": "true"}, content=body, headers=headers
            )
            response.raise_for_status()
            if orjson.loads(response.content)["errors"]:
                raise SystemExit("raw _bulk: some items were not created")
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--es-url", required=True)
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args()

    run = uuid.uuid4().hex[:8]
    aliases = {side: f"bench-ivb-{run}-{side}" for side in ("ours", "library", "raw")}
    es = make_client(Settings(ELASTICSEARCH_URL=args.es_url))
    data = small_events(args.events)
    try:
        for alias in aliases.values():
            install(es, alias)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            source = work / "events.ndjson"
            source.write_bytes(data)
            ours, peak, summary = run_ours(args.es_url, aliases["ours"], source, work)
            library = run_library(args.es_url, aliases["library"], data, work)
            raw = run_raw(args.es_url, aliases["raw"], data)
        for alias in aliases.values():
            es.indices.refresh(index=alias)
            assert es.count(index=alias)["count"] == args.events, alias
    finally:
        for alias in aliases.values():
            es.indices.delete(index=f"{alias}-*", ignore_unavailable=True, allow_no_indices=True)
            lenient = es.options(ignore_status=404)
            lenient.indices.delete_index_template(name=alias)
            for part in ("settings", "mappings"):
                lenient.cluster.delete_component_template(name=f"{alias}-{part}")
        es.close()

    n = args.events
    print(f"{n} events, {len(data) / n:.0f} bytes each on average")
    print(f"ingest command : {n / ours:8.0f} events/s ({ours:.2f} s, start-up included)")
    print(f"ingest peak RSS: {peak / 2**20:8.0f} MiB")
    print(f"ingest library : {n / library:8.0f} events/s ({library:.2f} s)")
    print(f"raw _bulk      : {n / raw:8.0f} events/s ({raw:.2f} s, bodies pre-built)")
    print(f"command's last line: {summary}")


if __name__ == "__main__":
    main()
