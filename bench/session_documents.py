"""What session documents cost the enrichment pass (issue 59, item 1): one worker's
events/s with them and without, and the session documents written per event.

    export ELASTICSEARCH_URL=$(session-recall node start | tail -n1)
    python -m bench.session_documents --events 20000 --rounds 3

The benchmark's generated events (`bench.generate`: one heavy user over sessions of
about 100 events, light users beside) are stored once per round into two fresh aliases
each, then each alias is enriched by one pass with the configured embedder
(`SESSION_RECALL_EMBEDDER`; `static` by default here, the fastest pass, where a cost
of the documents shows most). One alias of the two has no session documents' index,
as an alias set up before them: the pass writes none there. The two alternate which
goes first. Writes per event: the documents the pass wrote (the index's indexing
count) over the events it enriched.
"""

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

from bench import generate
from bench.machine import describe
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.core.index_names import session_index
from session_recall.factories import embedder_for
from session_recall.indexer import Event, Submission, Writer, enrich
from session_recall.templates import install, uninstall


def _alias() -> str:
    return f"bench-sdocs-r{uuid.uuid4().hex[:8]}"  # no dash before a digit


def _stored(client: Any, events: list[Event]) -> str:
    alias = _alias()
    install(client, alias)
    writer = Writer(client, alias)
    refused = [w for w in writer.write(Submission(e) for e in events) if not w.result.stored]
    if refused:
        raise RuntimeError(f"{len(refused)} events were refused: {refused[0].result}")
    writer.refresh()
    return alias


def _pass(client: Any, alias: str, embedder: Any, *, documents: bool) -> dict[str, float]:
    if not documents:
        client.indices.delete(index=session_index(alias))
    started = time.perf_counter()
    summary = enrich(client, alias, embedder)
    seconds = time.perf_counter() - started
    written = 0
    if documents:
        stats = client.indices.stats(index=session_index(alias), metric="indexing")
        written = stats["_all"]["primaries"]["indexing"]["index_total"]
    return {"events_per_s": summary.enriched / seconds, "enriched": summary.enriched,
            "documents_written": written}  # fmt: skip


def measure(events: int, rounds: int, settings: Settings) -> dict[str, Any]:
    client = make_client(settings)
    embedder = embedder_for(settings)
    if embedder is not None and hasattr(embedder, "load"):
        embedder.load()  # the model's start-up is not the pass's rate
    stored = [Event.model_validate(e) for e in generate.events(events)]
    runs: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
    for n in range(rounds):
        order = ("on", "off") if n % 2 == 0 else ("off", "on")
        for side in order:
            alias = _stored(client, stored)
            try:
                runs[side].append(_pass(client, alias, embedder, documents=side == "on"))
            finally:
                uninstall(client, alias)
    on = statistics.median(r["events_per_s"] for r in runs["on"])
    off = statistics.median(r["events_per_s"] for r in runs["off"])
    per_event = [r["documents_written"] / r["enriched"] for r in runs["on"]]
    return {
        "events": len(stored),
        "embedder": embedder.model_id if embedder is not None else "none",
        "rounds": rounds,
        "with_documents_events_per_s": on,
        "without_events_per_s": off,
        "ratio": on / off,
        "documents_per_event": statistics.median(per_event),
        "runs": runs,
        "machine": describe(client),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000, help="Heavy user's events.")
    parser.add_argument("--rounds", type=int, default=3, help="Passes on each side.")
    args = parser.parse_args(argv)
    if args.events < 100 or args.rounds < 1:
        parser.error("--events is at least 100, --rounds at least 1")
    os.environ.setdefault("SESSION_RECALL_EMBEDDER", "static")
    settings = Settings()
    if not settings.elasticsearch_url:
        parser.error("set ELASTICSEARCH_URL first, e.g. export "
                     "ELASTICSEARCH_URL=$(session-recall node start | tail -n1)")  # fmt: skip
    found = measure(args.events, args.rounds, settings)
    print(
        f"{found['events']:,} events, {found['embedder']}, median of {found['rounds']} "
        f"passes a side: {found['with_documents_events_per_s']:,.0f} events/s with session "
        f"documents, {found['without_events_per_s']:,.0f} without ({found['ratio']:.2f}x); "
        f"{found['documents_per_event']:.3f} documents written per event"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
