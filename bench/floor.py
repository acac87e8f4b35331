"""The least CPU per event a loader can spend in Python: the room a CPU target leaves.

    python -m bench.floor FILE [--stub] [--partition month|year]

One loop in one thread, with none of `ingest`'s guarantees. orjson parses each line;
the document is the one ours stores (the same `_id` digest, timestamp text, partition
and routing), its create header and body serialized once each, 2,000 to a `_bulk`
request posted with the client, whose answer is read for the statuses only. No
validation, no duplicate-key check, no dead letters, no checkpoint, no tombstones, no
progress, no worker thread. `--stub` stops before each request: what is spent before
anything is sent.

Loads FILE (events with their `event_id`, as `bench.generate` writes them) into a
fresh alias, deleted afterwards, and prints this process's CPU per event: compare it
with `python -m bench.ingest_cpu FILE`, run just before or after.
"""

import argparse
import contextlib
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson

from bench.loader import SNAKE
from bench.machine import own_cpu_s
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.core.digest import digest
from session_recall.core.instant import Instant, InvalidInstant
from session_recall.core.partitions import DEFAULT_GRANULARITY, GRANULARITIES, PartitionNames
from session_recall.templates import install, uninstall

CHUNK_EVENTS = 2000  # the writer's default
_STATUSES = "items.*.status"


@contextlib.contextmanager
def _plain_events_only(path: Path) -> Iterator[None]:
    """No validation here: an event this loop cannot read ends the run, saying so."""
    try:
        yield
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError, InvalidInstant) as err:
        raise SystemExit(
            f"bench.floor: {path} holds an event it cannot read ({type(err).__name__}: "
            f"{err}). It takes valid events with their event_id, as bench.generate writes them."
        ) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--stub", action="store_true", help="send nothing")
    parser.add_argument("--partition", choices=GRANULARITIES, default=DEFAULT_GRANULARITY)
    parser.add_argument("--es-url", default=os.environ.get("ELASTICSEARCH_URL"))
    args = parser.parse_args(argv)
    if not args.path.is_file():
        parser.error(f"{args.path} is not a file: give an NDJSON file of bench.generate's")
    client = make_client(Settings(ELASTICSEARCH_URL=args.es_url))
    alias = f"bench-floor-r{uuid.uuid4().hex[:6]}"  # no dash before a digit
    names = PartitionNames(alias, args.partition)
    # Stopped from outside (a benchmark's timeout, a kill): its alias is deleted all the
    # same, by the `finally` below, which SIGTERM's default action would skip.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    install(client, alias, granularity=args.partition)
    events = stored = 0
    try:
        cpu = own_cpu_s()
        with args.path.open("rb") as lines, _plain_events_only(args.path):
            while batch := lines.readlines(CHUNK_EVENTS * 300):
                parts: list[bytes] = []
                for line in batch:
                    event = {SNAKE.get(k, k): v for k, v in orjson.loads(line).items()}
                    user = event["user_id"]
                    stamp = Instant.parse(event["timestamp"])
                    event["timestamp"] = stamp.to_elasticsearch()
                    index = names.index(stamp)
                    doc_id = digest([user, event["event_id"]])
                    header = {"create": {"_index": index, "routing": user, "_id": doc_id}}
                    parts += (orjson.dumps(header), orjson.dumps(event))
                events += len(batch)
                if args.stub:
                    continue
                parts.append(b"")
                answer = client.bulk(body=b"\n".join(parts), filter_path=_STATUSES).body
                stored += sum(
                    1 for item in answer["items"] for result in item.values()
                    if result["status"] == 201
                )  # fmt: skip
        cpu = own_cpu_s() - cpu
    finally:
        uninstall(client, alias)
    sent = "sent nothing (--stub)" if args.stub else f"stored {stored:,}"
    print(f"{events:,} events, {sent}: {cpu / events * 1e6:.1f} µs CPU/event")
    return 0 if args.stub or stored == events else 1


if __name__ == "__main__":
    sys.exit(main())
