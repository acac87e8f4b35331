"""CPU per event of `ingest()` in this process, optionally under cProfile.

    python -m bench.ingest_cpu FILE [--profile] [--top 30]

Loads FILE into a fresh alias (deleted afterwards) and prints the process's user +
system CPU time per event. CPU time is far less sensitive than wall time to other
work on a shared machine, so this is the figure to compare before and after a change.
"""

import argparse
import cProfile
import os
import pstats
import sys
import time
import uuid
from pathlib import Path

from bench.machine import own_cpu_s
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.indexer.ingest import ingest
from session_recall.indexer.lines import read_stream
from session_recall.templates import install


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--es-url", default=os.environ.get("ELASTICSEARCH_URL"))
    args = parser.parse_args(argv)
    client = make_client(Settings(ELASTICSEARCH_URL=args.es_url))
    alias = f"bench-cpu-r{uuid.uuid4().hex[:6]}"  # no dash before a digit
    install(client, alias)
    profiler = cProfile.Profile() if args.profile else None
    try:
        with args.path.open("rb") as stream:
            cpu, wall = own_cpu_s(), time.perf_counter()
            if profiler:
                profiler.enable()
            summary = ingest(
                client,
                alias,
                read_stream(stream, runs=True),
                dead_letter=args.path.with_suffix(".dead"),
            )
            if profiler:
                profiler.disable()
            cpu, wall = own_cpu_s() - cpu, time.perf_counter() - wall
        events = summary.read
        print(summary.line())
        print(
            f"{events} events: {cpu / events * 1e6:.1f} µs CPU/event, "
            f"{events / wall:,.0f} events/s wall"
        )
        if profiler:
            pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(args.top)
    finally:
        client.indices.delete(index=f"{alias}-*", ignore_unavailable=True, allow_no_indices=True)
        lenient = client.options(ignore_status=404)
        lenient.indices.delete_index_template(name=alias)
        for part in ("settings", "mappings"):
            lenient.cluster.delete_component_template(name=f"{alias}-{part}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
