"""Kept memories: what `consolidate` mines a second beside the enrichment pass, and how
long `recall_memories` takes for one user with many memories among many events.

    export ELASTICSEARCH_URL=$(session-recall node start | tail -n1)
    python -m bench.kept_memories --events 20k --memories 1k          # a small run
    python -m bench.kept_memories --events 1M --memories 10k          # issue 56's sizes

On one generated history (`bench.generate`: one heavy user with `--events` events, and
light users with a tenth as many again), stored into an alias of its own with the
writer and no enrichment:

- mining: one `consolidate` pass over every user (`Consolidator.run()`, the built-in
  miner, statements embedded with the static model), then one enrichment pass
  (`enrich`, the static model), each over all the stored events: events per second of
  wall time, in this process. The generated texts hold few of the miner's signals
  ("we decided" in about 3% of turns), so the pass is mostly reading;
- recall: `--memories` memories of the heavy user, saved through the store's writer
  (`save_resolved`, each citing one of the user's events, on a few hundred subjects,
  eight at a time), then `recall_memories` as a model calls it (the bound tool, its JSON output
  included): p50 and p95 over `--queries` questions, without turns and with
  `turns=5` (memory_search of the same user beneath the memories).

The report is a section of BENCHMARKS.md, written between its markers (`--report`);
`--no-report` prints the figures only.
"""

import argparse
import itertools
import json
import random
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from bench import generate, sections
from bench.machine import describe
from bench.timing import Samples, repeat
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.embeddings import StaticEmbedder
from session_recall.indexer import Event, Submission, Writer, enrich
from session_recall.indexer.enrichment.consolidation import Consolidator
from session_recall.indexer.enrichment.memories import MemoryWriter, SourceEvent
from session_recall.recall import Searchers
from session_recall.templates import install, uninstall
from session_recall.tools import recall_memories_tool

START = "<!-- kept memories speed: from python -m bench.kept_memories, its command below -->"
END = "<!-- /kept memories speed -->"
OUT = Path("bench/out")
QUERY_SEED = 56
# Memories saved at once while loading: a background agent saves one at a time, but
# 10k one by one would take most of an hour, each waiting for its refresh.
_SAVERS = 8
_SUBJECTS = 300  # subjects the memories are spread over (a few dozen each at 10k)
_TOPICS = (
    "billing database", "deploy day", "release train", "code review", "on-call rota",
    "office city", "team offsite", "lunch order", "support hours", "logo colour",
    "test runner", "search engine", "backup window", "cloud region", "meeting notes",
)  # fmt: skip
_CHOICES = (
    "Postgres", "MySQL", "Friday", "Tuesday", "Lisbon", "Porto", "blue", "green",
    "pytest", "Elasticsearch", "weekly", "monthly", "morning", "evening", "Berlin",
)  # fmt: skip


def kept_section(document: str) -> str | None:
    return sections.kept(document, start=START, end=END)


def replace_section(document: str, text: str) -> str:
    return sections.replace(document, text, start=START, end=END)


def _statement(n: int) -> tuple[str, str]:
    """The n-th memory's statement and subject: a choice about a numbered topic."""
    topic = _TOPICS[n % len(_TOPICS)]
    subject = f"{topic} {n % _SUBJECTS // len(_TOPICS)}"
    choice = _CHOICES[(n * 7) % len(_CHOICES)]
    return f"For the {subject} we go with {choice} (note {n}).", subject


def _queries(count: int) -> list[str]:
    rng = random.Random(QUERY_SEED)
    return [
        f"what did we pick for the {rng.choice(_TOPICS)} {rng.randrange(_SUBJECTS // 15)}?"
        for _ in range(count)
    ]


def _store(client: Elasticsearch, alias: str, path: Path) -> int:
    writer = Writer(client, alias)
    lines = path.open("rb")
    with lines:
        submissions = (Submission(Event.model_validate_json(line)) for line in lines)
        stored = sum(w.result.stored for w in writer.write(submissions))
    client.indices.refresh(index=alias)
    return stored


def _heavy_sources(client: Elasticsearch, alias: str, count: int) -> list[SourceEvent]:
    """`count` of the heavy user's events (fewer when it has fewer), to cite as sources."""
    body = {
        "query": {"term": {"user_id": generate.HEAVY_USER}},
        "sort": [{"timestamp": "asc"}, {"event_id": "asc"}],
        "size": min(count, 10_000),
        "_source": ["event_id", "timestamp"],
    }
    hits = client.search(index=alias, routing=generate.HEAVY_USER, **body).body["hits"]["hits"]
    return [
        SourceEvent(h["_source"]["event_id"], h["_id"], Instant.parse(h["_source"]["timestamp"]))
        for h in hits
    ]


def _save(writer: MemoryWriter, sources: list[SourceEvent], count: int) -> float:
    """Save `count` memories, `_SAVERS` at a time (each save makes its memory
    searchable before it returns); the seconds it took."""

    def save(n: int) -> None:
        statement, subject = _statement(n)
        writer.save_resolved(statement, "decision", [sources[n % len(sources)]], subject=subject)

    started = time.perf_counter()
    with ThreadPoolExecutor(_SAVERS) as pool:
        list(pool.map(save, range(count)))
    return time.perf_counter() - started


def _timed_recall(tool: Any, queries: list[str], *, turns: int, reps: int) -> Samples:
    asked = itertools.cycle(queries)

    def call() -> None:
        result = tool.call({"innerThought": "bench", "query": next(asked), "turns": turns})
        if result.is_error:
            raise RuntimeError(result.text)

    return repeat(call, reps=reps, warmup=min(10, reps))


def measure(
    client: Elasticsearch, *, events: int, memories: int, queries: int, work: Path
) -> dict[str, Any]:
    path = work / f"kept-memories-{events}.ndjson"
    data = generate.generate(path, events)
    alias = f"bench_kept_{uuid.uuid4().hex[:6]}"
    install(client, alias)
    embedder = StaticEmbedder()
    try:
        started = time.perf_counter()
        stored = _store(client, alias, path)
        store_s = time.perf_counter() - started

        started = time.perf_counter()
        mined = Consolidator(client, alias, embedder=embedder).run()
        mine_s = time.perf_counter() - started
        client.indices.refresh(index=alias)

        started = time.perf_counter()
        enriched = enrich(client, alias, embedder)
        enrich_s = time.perf_counter() - started

        sources = _heavy_sources(client, alias, memories)
        writer = MemoryWriter(client, alias, user_id=generate.HEAVY_USER, embedder=embedder)
        save_s = _save(writer, sources, memories)
        searchers = Searchers(client=client, alias=alias, cursor_key=b"k" * 32, embedder=embedder)
        tool = recall_memories_tool(
            searchers.memories(user_id=generate.HEAVY_USER),
            turns=searchers.memory(user_id=generate.HEAVY_USER),
        )
        asked = _queries(queries)
        bare = _timed_recall(tool, asked, turns=0, reps=queries)
        with_turns = _timed_recall(tool, asked, turns=5, reps=queries)
        kept = client.count(
            index=f"{alias}-memories",
            routing=generate.HEAVY_USER,
            query={"term": {"user_id": generate.HEAVY_USER}},
        )["count"]
        return {
            "events": stored,
            "heavy_events": data.heavy_events,
            "light_users": data.light_users,
            "store_events_per_s": stored / store_s,
            "mined_events": mined.events,
            "mined_memories": mined.saved,
            "mined_superseded": mined.superseded,
            "mine_events_per_s": mined.events / mine_s if mine_s else None,
            "enriched_events": enriched.enriched,
            "enrich_events_per_s": enriched.enriched / enrich_s if enrich_s else None,
            "memories_saved": memories,
            "memories_stored": int(kept),
            "save_per_s": memories / save_s if save_s else None,
            "recall": bare.summary(),
            "recall_with_turns": with_turns.summary(),
        }
    finally:
        uninstall(client, alias)
        path.unlink(missing_ok=True)


def render(results: dict[str, Any], command: str) -> str:
    r = results
    mine, enriched = r["mine_events_per_s"], r["enrich_events_per_s"]
    ratio = f"{mine / enriched:.2f}×" if mine and enriched else "n/a"
    bare, turns = r["recall"], r["recall_with_turns"]
    bare_ms = f"{bare['p50_ms']:.2f} | {bare['p95_ms']:.2f}"
    turns_ms = f"{turns['p50_ms']:.2f} | {turns['p95_ms']:.2f}"
    return f"""{START}
## Kept memories: mining and recall speed

`{command}`, one run on {r["when"]}: {r["machine"]}. {r["events"]:,} generated events
(`bench.generate`: {r["heavy_events"]:,} of the heavy user, the rest of
{r["light_users"]:,} light users), stored with the writer and no enrichment
({r["store_events_per_s"]:,.0f} events/s), into an alias of their own; rates are events
over wall time in this process, on a machine shared with other runs (the enrichment
pass's own section above was measured on a quieter one).

| pass over every stored event | events/s | against the enrichment pass |
| --- | ---: | ---: |
| `consolidate` (the built-in miner; statements embedded, static model) | {mine:,.0f} | {ratio} |
| the enrichment pass (`enrich`, the static model) | {enriched:,.0f} | 1.00× |

The miner read {r["mined_events"]:,} events and kept {r["mined_memories"]:,} memories
({r["mined_superseded"]:,} superseded) from the generated texts, which hold few of its
signals.

`recall_memories` for the heavy user with {r["memories_stored"]:,} memories (saved
through the store's writer, eight at a time, at {r["save_per_s"]:,.0f} a second, each
searchable on return), {r["recall"]["n"]} questions, as a model calls the tool (its JSON included):

| call | p50 ms | p95 ms |
| --- | ---: | ---: |
| `recall_memories` (memories only) | {bare_ms} |
| `recall_memories`, `turns=5` (memory_search beneath) | {turns_ms} |
{END}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--es-url", default=None, help="default: ELASTICSEARCH_URL")
    parser.add_argument("--events", default="20k", help="the heavy user's events (20k, 1M)")
    parser.add_argument("--memories", default="1k", help="the heavy user's memories (1k, 10k)")
    parser.add_argument("--queries", type=int, default=100, help="timed recall calls")
    parser.add_argument("--report", type=Path, default=Path("BENCHMARKS.md"))
    parser.add_argument("--no-report", action="store_true", help="print the figures only")
    parser.add_argument("--work-dir", type=Path, default=OUT / "work")
    args = parser.parse_args(argv)
    # bench.run keeps this module's section, so it is imported late.
    from bench.run import _shown, parse_size

    settings = Settings() if args.es_url is None else Settings(ELASTICSEARCH_URL=args.es_url)
    client = make_client(settings, request_timeout=120)
    args.work_dir.mkdir(parents=True, exist_ok=True)
    results = measure(
        client,
        events=parse_size(args.events),
        memories=parse_size(args.memories),
        queries=args.queries,
        work=args.work_dir,
    )
    machine = describe(client)
    results["when"] = machine["date"]
    results["machine"] = (
        f"{machine['cpu_model']}, {machine['cores_logical']} cores, Elasticsearch "
        f"{machine['elasticsearch']} with a {machine['es_heap_gb']:g} GB heap"
    )
    print(json.dumps(results, indent=2))
    if not args.no_report:
        shown = _shown(argv if argv is not None else sys.argv[1:])
        command = " ".join(["python -m bench.kept_memories", *shown])
        document = args.report.read_text(encoding="utf-8") if args.report.exists() else ""
        args.report.write_text(
            replace_section(document, render(results, command)), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
