"""The enrichment pass: what it costs beside the store, how often it writes an event, and
how it scales with workers.

    export ELASTICSEARCH_URL=$(session-recall node start | tail -n1)
    python -m bench.enrichment --events 100000                  # the static model
    python -m bench.enrichment --events 100000 --transformer e5-small --model-events 3000

On one generated history (`bench.generate`), each into an alias of its own:

- the plain loader (`bench.loader`: `helpers.streaming_bulk`, no enrichment), the floor;
- `session-recall ingest --no-enrich`, then `session-recall embed`: the store and the
  enrichment pass apart (the default embedder, the static model);
- `session-recall ingest`, as installed: store and enrichment together;
- writes per event: Elasticsearch's own count of index operations on the alias over
  the number of events, for the bulk load above, and for a live flow: events stored
  one at a time while a follower enriches them, as `serve` receives them;
- with `--transformer`: the model's own rate over the events' texts, in this process,
  then one `embed` pass with 1 and with 2 workers (`embed --workers N`) over as many
  events, each pass over a fresh copy: the pass against the model.

The report is a section of BENCHMARKS.md, written between its markers.
"""

import argparse
import functools
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from bench import configuration, generate, sections
from bench.machine import describe
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.embeddings import StaticEmbedder, TransformerEmbedder
from session_recall.indexer import Event, Submission, Writer, follow, pending
from session_recall.indexer.native import available as native_built
from session_recall.templates import install, uninstall

START = "<!-- enrichment: from python -m bench.enrichment, its command below -->"
END = "<!-- /enrichment -->"
OUT = Path("bench/out")
_CLI = [sys.executable, "-c", "from session_recall.cli import main; main()"]


def kept_section(document: str) -> str | None:
    return sections.kept(document, start=START, end=END)


def replace_section(document: str, text: str) -> str:
    return sections.replace(document, text, start=START, end=END)


def _alias(what: str) -> str:
    return f"bench_enrich_{what}_{uuid.uuid4().hex[:6]}"


def _index_ops(client: Elasticsearch, alias: str) -> int:
    stats = client.indices.stats(index=alias, metric="indexing").body
    return int(stats["_all"]["primaries"]["indexing"]["index_total"])


def _timed(run: Callable[[], Any]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def _cli(url: str, alias: str, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [*_CLI, "--es-url", url, "--index", alias, *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"session-recall {' '.join(args)} failed: {done.stderr[-800:]}")
    return done.stdout


def _count(path: Path) -> int:
    with path.open("rb") as lines:
        return sum(1 for line in lines if line.strip())


def bulk(client: Elasticsearch, url: str, path: Path) -> dict[str, Any]:
    """The plain loader, ours apart (store, then the static model's pass) and ours as
    installed (the default configuration: its embedder, enrichment on)."""
    events = _count(path)
    static = configuration.static_model(native_core=native_built())
    default = configuration.default()
    default.check()
    results: dict[str, Any] = {
        "events": events,
        "static": static.to_json(),
        "default": default.to_json(),
    }
    plain = _alias("plain")
    install(client, plain)
    try:
        loader = [sys.executable, "-m", "bench.loader", "--es-url", url, "--index", plain]
        seconds = _timed(lambda: subprocess.run([*loader, str(path)], check=True))
        results["plain_loader"] = events / seconds
    finally:
        uninstall(client, plain)
    apart = _alias("apart")
    install(client, apart)
    try:
        results["store"] = events / _timed(
            lambda: _cli(url, apart, "ingest", "--no-enrich", str(path), env=static.env)
        )
        client.indices.refresh(index=apart)
        before = _index_ops(client, apart)
        results["pass"] = events / _timed(lambda: _cli(url, apart, "embed", env=static.env))
        results["writes_per_event_bulk"] = 1 + (_index_ops(client, apart) - before) / events
    finally:
        uninstall(client, apart)
    whole = _alias("default")
    install(client, whole)
    try:
        results["default_ingest"] = events / _timed(
            lambda: _cli(url, whole, "ingest", str(path), env=default.env)
        )
    finally:
        uninstall(client, whole)
    return results


def live(client: Elasticsearch, path: Path, count: int) -> float:
    """Writes per event when events come one at a time, each followed by a pass."""
    alias = _alias("live")
    install(client, alias)
    events = [Event.model_validate_json(line) for line in _lines(path, count)]
    stop, wake = threading.Event(), threading.Event()
    embedder = StaticEmbedder()
    follower = threading.Thread(
        target=follow, args=(client, alias, embedder),
        kwargs={"stop": stop, "wake": wake, "poll_seconds": 0.05},
    )  # fmt: skip
    follower.start()
    try:
        writer = Writer(client, alias)
        for event in events:
            list(writer.write([Submission(event)]))
            wake.set()
        writer.refresh()
        deadline = time.monotonic() + 600
        while pending(client, alias, embedder) and time.monotonic() < deadline:
            time.sleep(0.2)  # a benchmark's wait: the follower's passes end in a refresh
        stop.set()
        follower.join()
        return _index_ops(client, alias) / len(events)
    finally:
        stop.set()
        uninstall(client, alias)


def _lines(path: Path, count: int) -> list[bytes]:
    found = []
    with path.open("rb") as lines:
        for line in lines:
            if line.strip():
                found.append(line)
            if len(found) == count:
                break
    return found


def transformer(
    client: Elasticsearch, url: str, path: Path, name: str, count: int
) -> dict[str, Any]:
    """The model alone over the events' texts, then the pass with 1 and 2 workers."""
    events = [Event.model_validate_json(line) for line in _lines(path, count)]
    model = TransformerEmbedder(name, Settings(ELASTICSEARCH_URL=url).models_folder)
    model.embed(["warm up"])
    texts = [event.text for event in events]

    def alone() -> None:
        # In one call: the model sorts the texts by length and batches like with like,
        # as it does over a page of the pass (pages are bounded by bytes, not count).
        model.embed(texts)

    results: dict[str, Any] = {"model": name, "events": len(events)}
    # Alone before the passes and again after them: the machine's speed drifts, and
    # the node may still be merging what the runs before stored.
    results["model_alone_before"] = len(events) / _timed(alone)
    env = {"SESSION_RECALL_EMBEDDER": name}
    for workers in (1, 2):
        alias = _alias(f"w{workers}")
        install(client, alias)
        try:
            stored = Writer(client, alias).write(map(Submission, events))
            assert all(w.result.stored for w in stored)
            client.indices.refresh(index=alias)
            args = ["embed", "--workers", str(workers)] if workers > 1 else ["embed"]
            seconds = _timed(functools.partial(_cli, url, alias, *args, env=env))
            results[f"workers_{workers}"] = len(events) / seconds
        finally:
            uninstall(client, alias)
    results["model_alone_after"] = len(events) / _timed(alone)
    results["model_alone"] = max(results["model_alone_before"], results["model_alone_after"])
    return results


_MILLION = 1_000_000


def _lag(found: dict[str, Any]) -> str:
    """The lag after a 1M-event load, from the pass rates measured above: `ingest`
    acknowledges before it enriches, so a whole load awaits its pass at first."""
    rates = [(found["bulk"]["static"]["label"], found["bulk"]["pass"])]
    if "transformer" in found:
        t = found["transformer"]
        rates += [
            (f"`{t['model']}`, one worker", t["workers_1"]),
            (f"`{t['model']}`, two workers", t["workers_2"]),
        ]
    cleared = "; ".join(f"{name}: {_duration(_MILLION / rate)}" for name, rate in rates)
    return (
        "The lag after a 1M-event load: `ingest` acknowledges the events before their "
        "pass, so all 1,000,000 await enrichment once the load is stored, and memory_search "
        "finds them by their own words meanwhile. At the rates above the pass clears them "
        f"in: {cleared} (the load over the rates, not a 1M-event run)."
    )


def _duration(seconds: float) -> str:
    return f"{seconds / 60:,.0f} min" if seconds < 3600 else f"{seconds / 3600:.1f} h"


def section(found: dict[str, Any], machine: dict[str, Any], command: str) -> str:
    b = found["bulk"]
    plain = b["plain_loader"]
    rows = [
        ("the plain loader (`helpers.streaming_bulk`, no enrichment)", plain, 1.0),
        ("`ingest --no-enrich` (store and acknowledge)", b["store"], b["store"] / plain),
        (f"`embed`, one pass ({b['static']['label']})", b["pass"], b["pass"] / plain),
        (
            f"`ingest` as installed (store, then the pass; {b['default']['label']})",
            b["default_ingest"],
            b["default_ingest"] / plain,
        ),
    ]
    lines = [
        START,
        "## Enrichment",
        "",
        f"`{command}`, one run on {machine['date']}: {machine['cpu_model']}, "
        f"{machine['cores_logical']} cores, Elasticsearch {machine['elasticsearch']} with a "
        f"{machine['es_heap_gb']:g} GB heap, the native core "
        f"{'built' if native_built() else 'absent (the Python path)'}. "
        f"{b['events']:,} generated events (`bench.generate`), each configuration into an "
        "alias of its own; rates are events over wall time, the command's start included.",
        "",
        "| what | events/s | against the plain loader |",
        "| --- | ---: | ---: |",
        *(f"| {name} | {rate:,.0f} | {ratio:.2f}× |" for name, rate, ratio in rows),
        "",
        "Writes per event (Elasticsearch's count of index operations on the alias, over the "
        f"events): {b['writes_per_event_bulk']:.2f} in the bulk load above (the store, then "
        f"the pass), {found['live']:.2f} when {found['live_events']:,} events come one at a "
        "time, each followed by a pass, as `serve` receives them.",
    ]
    if "transformer" in found:
        t = found["transformer"]
        lines += [
            "",
            f"With {t['model']} over {t['events']:,} of the same events' texts: the model alone "
            f"{t['model_alone_before']:,.0f} texts/s before the passes and "
            f"{t['model_alone_after']:,.0f} after them (in this process, the texts in one "
            f"call); one pass (`embed`) {t['workers_1']:,.0f} events/s "
            f"({t['workers_1'] / t['model_alone']:.0%} of the model's better rate), with "
            f"`--workers 2` {t['workers_2']:,.0f} events/s ({t['workers_2'] / t['workers_1']:.2f}× "
            "one worker). One worker's model already runs a thread on each core, so on these "
            "2 cores, shared with the node, a second worker only competes for them; workers "
            "pay where there are cores to spare, or on other machines.",
        ]
    lines += ["", _lag(found)]
    lines += [END, ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.enrichment", description=__doc__)
    parser.add_argument("--events", type=int, default=100_000, help="Heavy user's events.")
    parser.add_argument("--live-events", type=int, default=2_000)
    parser.add_argument("--transformer", choices=["e5-small", "minilm"], default=None)
    parser.add_argument("--model-events", type=int, default=3_000)
    parser.add_argument("--report", type=Path, default=Path("BENCHMARKS.md"))
    parser.add_argument("--no-report", action="store_true", help="Print the section only.")
    args = parser.parse_args(argv)
    url = os.environ.get("ELASTICSEARCH_URL")
    if not url:
        parser.error("set ELASTICSEARCH_URL (e.g. `session-recall node start | tail -n1`)")
    client = make_client(Settings(ELASTICSEARCH_URL=url), request_timeout=300)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"enrichment-{args.events}.ndjson"
    if not path.exists():
        generate.main(["--events", str(args.events), "--out", str(path)])
    found: dict[str, Any] = {"bulk": bulk(client, url, path)}
    found["live"] = live(client, path, args.live_events)
    found["live_events"] = args.live_events
    if args.transformer:
        found["transformer"] = transformer(client, url, path, args.transformer, args.model_events)
    command = " ".join(
        ["python -m bench.enrichment", *(argv if argv is not None else sys.argv[1:])]
    )
    text = section(found, describe(client), command)
    print(json.dumps(found, indent=2))
    if not args.no_report:
        report = args.report.read_text(encoding="utf-8") if args.report.exists() else ""
        args.report.write_text(replace_section(report, text), encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
