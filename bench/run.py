"""Runs every benchmark and writes the report and the plot.

    python -m bench.run                 # 10k, 100k and 1M events: BENCHMARKS.md, bench/latency.png
    python -m bench.run --quick         # 2k and 10k, a smoke run: into bench/out/quick/
    python -m bench.run --sizes 10k 100k --es-url http://127.0.0.1:9200
    python -m bench.run --semantic      # issue 10 (bench/semantic.py)
    python -m bench.run --scale         # issue 11 (bench/scale.py): partitions, a cluster

Elasticsearch comes from --es-url or ELASTICSEARCH_URL. Every index, alias and template
the run creates is named bench-<run id>-... and is deleted at the end (--keep keeps
them). Generated data goes to --work-dir (git-ignored bench/out/ by default).
"""

import argparse
import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from bench import (
    alias_name,
    configuration,
    enrichment,
    generate,
    ingest_bench,
    kept_memories,
    loader,
    machine,
    memory_eval,
    memory_mining,
    metrics_cost,
    plot,
    report,
    scale,
    semantic,
    serve_bench,
)
from bench.configuration import Configuration
from bench.recall_bench import KINDS, OurRecall, Workload, count_matches, run_reference
from bench.reference_recall import FETCH_SIZE
from session_recall.client import check_server, make_client
from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError
from session_recall.core.partitions import DEFAULT_GRANULARITY, Granularity
from session_recall.indexer import native
from session_recall.templates import install, uninstall

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
SINCE_SHARE = 0.1  # `since` keeps the newest tenth of the history


@dataclass(frozen=True)
class Config:
    sizes: tuple[int, ...]
    reps: int
    warmup: int
    cursor_depth: int
    reference_reps: int
    reference_budget_s: float
    reference_all_kinds_max: int  # above this size, the reference runs page 0 (any) only
    report: Path
    plot: Path
    work_dir: Path
    seed: int = generate.SEED
    light_share: float = generate.LIGHT_SHARE
    quick: bool = False
    # --scale: keep each size's alias, and reuse a kept one whose count matches.
    keep: bool = False
    # The period of every alias the run makes, the baselines' too.
    partition: Granularity = DEFAULT_GRANULARITY
    # The default configuration (enrichment on) runs at sizes up to this (None: all).
    enrich_up_to: int | None = None


def parse_size(text: str) -> int:
    text = text.strip().lower().replace("_", "").replace(",", "")
    for suffix, factor in (("m", 1_000_000), ("k", 1_000)):
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(text)


def config_from(args: argparse.Namespace) -> Config:
    quick = args.quick
    out = args.out_dir
    default_sizes = (2_000, 10_000) if quick else (10_000, 100_000, 1_000_000)
    if args.scale and not quick:
        default_sizes = (10_000, 1_000_000, 10_000_000)
    sizes = tuple(sorted(parse_size(s) for s in args.sizes)) if args.sizes else default_sizes
    return Config(
        sizes=sizes,
        reps=args.reps or (20 if quick else 200),
        warmup=3 if quick else 20,
        cursor_depth=args.cursor_depth or (10 if quick else 1000),
        reference_reps=5 if quick else 20,
        reference_budget_s=args.reference_budget or (5.0 if quick else 45.0),
        reference_all_kinds_max=100_000,
        report=args.report or (out / "BENCHMARKS.md" if out else REPO / "BENCHMARKS.md"),
        plot=args.plot or (out / "latency.png" if out else REPO / "bench" / "latency.png"),
        work_dir=args.work_dir or (out / "work" if out else OUT / "work"),
        quick=quick,
        keep=args.keep,
        partition=args.partition or DEFAULT_GRANULARITY,
        enrich_up_to=parse_size(args.enrich_up_to) if args.enrich_up_to else None,
    )


class Run:
    def __init__(self, client: Elasticsearch, es_url: str, config: Config) -> None:
        self.client = client
        self.es_url = es_url
        self.config = config
        # `setup` refuses an alias with a dash before a digit (`core.index_names`).
        self.run_id = f"r{uuid.uuid4().hex[:6]}"
        self.aliases: list[str] = []

    def log(self, message: str) -> None:
        print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    def alias(self, name: str) -> str:
        alias = alias_name(self.run_id, name)
        install(self.client, alias, granularity=self.config.partition)
        self.aliases.append(alias)
        return alias

    def drop(self, alias: str) -> None:
        uninstall(self.client, alias)
        if alias in self.aliases:
            self.aliases.remove(alias)

    def settle(self, alias: str, expected: int) -> None:
        """Refresh, check every event arrived, and wait (a while) for merges to finish,
        so that timing does not share the node with this index's own merging."""
        self.client.indices.refresh(index=alias)
        stored = int(self.client.count(index=alias)["count"])
        if stored != expected:
            raise RuntimeError(f"{alias} holds {stored} events, not {expected}")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            stats = self.client.indices.stats(index=alias, metric="merge").body
            if stats["_all"]["primaries"]["merges"]["current"] == 0:
                return
            time.sleep(1)

    def node_cpu_s(self) -> float:
        return machine.node_cpu_s(self.client)

    def dataset(self, events: int) -> generate.Summary:
        path = self.config.work_dir / f"events-{report.size_label(events)}.ndjson"
        self.log(f"generating {events:,} events -> {path}")
        summary = generate.generate(
            path, events, light_share=self.config.light_share, seed=self.config.seed
        )
        self.log(
            f"  {summary.events:,} events, {summary.bytes / 1e6:.0f} MB, {summary.seconds:.0f} s"
        )
        return summary

    def ingest(self, data: generate.Summary) -> tuple[str, dict[str, Any]]:
        label = report.size_label(data.heavy_events)
        raw_alias = self.alias(f"raw-{label.lower()}")
        bodies = self.config.work_dir / f"bulk-{label}.bin"
        self.log(f"raw _bulk: preparing bodies for {data.events:,} events")
        prepared = ingest_bench.prepare_bulk(data.path, raw_alias, bodies, self.config.partition)
        self.log("raw _bulk: posting")
        node_cpu = self.node_cpu_s()
        raw = ingest_bench.run_raw(self.es_url, prepared)
        raw.extra["node_cpu_us_per_event"] = (self.node_cpu_s() - node_cpu) / raw.events * 1e6
        self.settle(raw_alias, data.events)
        self.drop(raw_alias)
        bodies.unlink()
        self.log(f"  raw: {raw.events_per_s:,.0f} events/s ({raw.seconds:.1f} s)")

        loader_alias = self.alias(f"loader-{label.lower()}")
        self.log(f"plain loader (json.loads + streaming_bulk) {data.path.name} -> {loader_alias}")
        node_cpu = self.node_cpu_s()
        loader = ingest_bench.run_loader(
            self.es_url, loader_alias, data.path, data.events, self.config.partition
        )
        loader.extra["node_cpu_us_per_event"] = (self.node_cpu_s() - node_cpu) / loader.events * 1e6
        self.settle(loader_alias, data.events)
        self.drop(loader_alias)
        self.log(f"  loader: {loader.events_per_s:,.0f} events/s ({loader.seconds:.1f} s)")

        self.log(f"bare loop (bench.floor) {data.path.name}")
        floor = ingest_bench.run_floor(self.es_url, data.path, data.events, self.config.partition)
        self.log(f"  bare loop: {floor.extra['cpu_us_per_event']:.1f} µs CPU/event")

        # `ingest` in each configuration, each into an alias of its own: storing only on
        # the Python path, and on the native core where it is built, then as a default
        # install runs it. Recall is timed on the last one's alias, the others are dropped.
        runs: dict[str, dict[str, Any]] = {}
        kept = ""
        plan = [configuration.storing_only(native_core=False)]
        if native.installed():
            plan.append(configuration.storing_only(native_core=True))
        if self.enriches(data):
            plan.append(configuration.default())
        for setup in plan:
            if kept:
                self.drop(kept)
            kept, runs[setup.name] = self.ours(data, setup)
        stored = runs.get("store_native", runs["store_python"])
        erased = self.after_event_erasure(data, plan[-2] if "default" in runs else plan[-1])
        return kept, {
            "ours": stored,  # storing only, on the core this machine built: the baselines' peer
            "ours_after_event_erasure": erased,
            **({"python": runs["store_python"]} if "store_native" in runs else {}),
            **({"default": runs["default"]} if "default" in runs else {}),
            "recall_on": "default" if "default" in runs else "ours",
            "raw": raw.to_json(),
            "loader": loader.to_json(),
            "floor": floor.to_json(),
        }

    def after_event_erasure(self, data: generate.Summary, setup: Configuration) -> dict[str, Any]:
        """`ingest` storing only (`setup`) into an alias where one event of a user the
        dataset never names was erased first: what writes cost once an alias has
        per-event tombstones, with the tombstone reads it made."""
        label = report.size_label(data.heavy_events).lower()
        alias = self.alias(f"erased-{label}")
        home = self.config.work_dir / "home"
        home.mkdir(parents=True, exist_ok=True)
        self.log(f"session-recall ingest {data.path.name} -> {alias}, one event erased")
        ingest_bench.erase_an_event(self.es_url, alias, home)
        reads = ingest_bench.tombstone_reads(self.client, alias)
        erased = ingest_bench.run_ours(self.es_url, alias, data.path, data.events, home, setup)
        reads = ingest_bench.tombstone_reads(self.client, alias) - reads
        erased.extra["tombstone_reads"] = reads
        self.settle(alias, data.events)
        self.drop(alias)
        self.log(f"  ours after an erasure: {erased.events_per_s:,.0f} events/s, {reads:,} reads")
        return erased.to_json()

    def enriches(self, data: generate.Summary) -> bool:
        """Whether this size runs the default configuration, enrichment and all."""
        limit = self.config.enrich_up_to
        return limit is None or data.heavy_events <= limit

    def ours(self, data: generate.Summary, setup: Configuration) -> tuple[str, dict[str, Any]]:
        """`session-recall ingest FILE` in `setup`, into an alias of its own (kept)."""
        label = report.size_label(data.heavy_events).lower()
        alias = self.alias(f"{label}-{setup.name.replace('_', '-')}")
        home = self.config.work_dir / "home"
        home.mkdir(parents=True, exist_ok=True)
        self.log(f"session-recall ingest ({setup.label}) {data.path.name} -> {alias}")
        node_cpu = self.node_cpu_s()
        run = ingest_bench.run_ours(self.es_url, alias, data.path, data.events, home, setup)
        run.extra["node_cpu_us_per_event"] = (self.node_cpu_s() - node_cpu) / run.events * 1e6
        self.settle(alias, data.events)
        acknowledged = run.extra.get("acknowledged_s")
        self.log(
            f"  {run.events_per_s:,.0f} events/s ({run.seconds:.1f} s"
            + ("" if acknowledged is None else f"; all acknowledged after {acknowledged:.1f} s")
            + f"), {run.extra['cpu_us_per_event']:.1f} µs CPU/event, "
            f"peak RSS {(run.peak_rss_bytes or 0) / 2**20:.0f} MB; {run.output}"
        )
        return alias, {**run.to_json(), "summary": run.output}

    def serve(self, data: generate.Summary) -> dict[str, Any]:
        home = self.config.work_dir / "home"
        home.mkdir(parents=True, exist_ok=True)
        return serve_bench.measure(
            default=configuration.default() if self.enriches(data) else None,
            stripped=configuration.storing_only(native_core=native.installed()),
            es_url=self.es_url,
            client=self.client,
            path=data.path,
            events=data.events,
            home=home,
            new_alias=self.alias,
            drop=self.drop,
            node_cpu_s=self.node_cpu_s,
            settle=self.settle,
            user=generate.HEAVY_USER,
            query=generate.QUERY_ANY,
            quick=self.config.quick,
            log=self.log,
        )

    def recall(self, alias: str, data: generate.Summary) -> dict[str, Any]:
        config = self.config
        workload = Workload(
            user_id=generate.HEAVY_USER,
            query_any=generate.QUERY_ANY,
            query_all=generate.QUERY_ALL,
            since=data.since_for_tail(SINCE_SHARE),
            cursor_depth=config.cursor_depth,
        )
        matches = count_matches(self.client, alias, workload)
        self.log(f"recall on {alias}: matches {matches}")
        ours, extra = OurRecall(self.client, alias, workload).run(
            reps=config.reps, warmup=config.warmup
        )
        for kind, result in ours.items():
            s = result.samples
            self.log(
                f"  ours {kind}: p50 {s.p50():.2f} ms, p95 {s.p95():.2f} ms, "
                f"took p50 {s.took_p50()}, overhead p50 {s.overhead_p50():.2f} ms"
            )
        kinds = KINDS if data.heavy_events <= config.reference_all_kinds_max else ("page0_any",)
        reference = run_reference(
            self.client,
            alias,
            workload,
            kinds=kinds,
            reps=config.reference_reps,
            budget_s=config.reference_budget_s,
            ours=extra["pages"],
        )
        for kind, result in reference.items():
            s = result.samples
            self.log(
                f"  reference {kind}: p50 {s.p50():,.1f} ms over {s.n} calls, "
                f"{result.cost}, same page: {result.same_as_reference}"
            )
        return {
            "matches": matches,
            "ours": {kind: r.to_json() for kind, r in ours.items()},
            "reference": {kind: r.to_json() for kind, r in reference.items()},
            "cursor_walk_s": extra["cursor_walk_s"],
        }

    def each_size(
        self,
        results: dict[str, Any],
        raw_json: Path,
        started: float,
        measure: Callable[[generate.Summary], dict[str, Any]],
    ) -> None:
        """Generate each size's dataset, measure it, and save the results as they come;
        whatever happens, leave no index behind."""
        try:
            for events in self.config.sizes:
                data = self.dataset(events)
                results["sizes"].append(measure(data))
                data.path.unlink()
                results["wall_s"] = time.perf_counter() - started
                raw_json.write_text(json.dumps(results, indent=1, default=str))
        finally:
            for alias in list(self.aliases):
                self.drop(alias)
        results["wall_s"] = time.perf_counter() - started
        results["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        raw_json.write_text(json.dumps(results, indent=1, default=str))

    def _results(self, command: str) -> dict[str, Any]:
        """What a mode's results start with: the machine, the command, the repetitions."""
        return {
            "machine": machine.describe(self.client),
            "command": command,
            "reps": self.config.reps,
            "warmup": self.config.warmup,
            "sizes": [],
        }

    def execute_semantic(self, command: str) -> dict[str, Any]:
        """The --semantic mode: see bench/semantic.py."""
        started = time.perf_counter()
        config = self.config
        results = self._results(command)
        self.each_size(
            results,
            config.work_dir / "semantic.json",
            started,
            lambda data: semantic.run_size(self, data),
        )
        config.report.parent.mkdir(parents=True, exist_ok=True)
        old = config.report.read_text(encoding="utf-8") if config.report.exists() else ""
        document = semantic.replace_section(old or "# Benchmarks\n", semantic.section(results))
        config.report.write_text(document, encoding="utf-8")
        self.log(f"wrote the semantic section of {config.report}")
        return results

    def execute_scale(self, command: str, cluster_size: int | None) -> dict[str, Any]:
        """The --scale mode: see bench/scale.py."""
        started = time.perf_counter()
        config = self.config
        results = {**self._results(command), "ingest_configuration": scale.storing_only().label}
        raw_json = config.work_dir / "scale.json"
        earlier = json.loads(raw_json.read_text()) if raw_json.exists() else {}
        try:
            for heavy in config.sizes:
                loaded = {s["heavy_events"]: s for s in earlier.get("sizes", [])}.get(heavy)
                results["sizes"].append(scale.run_size(self, heavy, loaded))
                raw_json.write_text(json.dumps(results, indent=1, default=str))
        finally:
            for alias in list(self.aliases):
                self.drop(alias)
        if cluster_size:
            home = config.work_dir / "nodes"
            results["cluster"] = scale.compare_cluster(self, cluster_size, home)
        elif "cluster" in earlier:  # --cluster-size 0 keeps the last comparison's figures
            results["cluster"] = {**earlier["cluster"], "command": earlier.get("command")}
        results["wall_s"] = time.perf_counter() - started
        raw_json.write_text(json.dumps(results, indent=1, default=str))
        scale_plot = config.plot.with_name("scale.png")
        plot.plot_scale(results, scale_plot)
        config.report.parent.mkdir(parents=True, exist_ok=True)
        old = config.report.read_text(encoding="utf-8") if config.report.exists() else ""
        text = scale.section(results, scale_plot, config.report)
        config.report.write_text(
            scale.replace_section(old or "# Benchmarks\n", text), encoding="utf-8"
        )
        self.log(f"wrote the scale-out section of {config.report} and {scale_plot}")
        return results

    def execute(self, command: str) -> dict[str, Any]:
        started = time.perf_counter()
        config = self.config
        results: dict[str, Any] = {
            "machine": machine.describe(self.client),
            "config": {
                **{k: v for k, v in asdict(config).items() if not isinstance(v, Path)},
                "command": command,
                "run_id": self.run_id,
                "query_any": generate.QUERY_ANY,
                "query_all": generate.QUERY_ALL,
                "reference_fetch_size": FETCH_SIZE,
            },
            "sizes": [],
        }

        def measure(data: generate.Summary) -> dict[str, Any]:
            alias, ingest = self.ingest(data)
            entry = {
                "heavy_events": data.heavy_events,
                "dataset": {k: v for k, v in asdict(data).items() if isinstance(v, int | float)},
                "ingest": ingest,
                **self.recall(alias, data),
            }
            self.drop(alias)
            entry["serve"] = self.serve(data)
            return entry

        self.each_size(results, config.work_dir / "results.json", started, measure)
        plot.plot(results, config.plot)
        config.report.parent.mkdir(parents=True, exist_ok=True)
        rendered = report.render(results, plot=config.plot, report=config.report)
        old = config.report.read_text(encoding="utf-8") if config.report.exists() else ""
        # Sections written by the other modes' runs, the LoCoMo harness and the miner's.
        modes = (semantic, scale, memory_eval, memory_mining, enrichment, metrics_cost,
                 kept_memories)  # fmt: skip
        for mode in modes:
            kept = mode.kept_section(old)
            if kept is not None:
                rendered = mode.replace_section(rendered, kept)
        config.report.write_text(rendered, encoding="utf-8")
        self.log(f"wrote {config.report} and {config.plot} in {results['wall_s'] / 60:.1f} min")
        return results


def _shown(argv: list[str]) -> list[str]:
    """The arguments worth printing in the report: not where the node or files were."""
    hidden = {"--es-url", "--out-dir", "--report", "--plot", "--work-dir"}
    shown, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in hidden:
            skip = True
        elif arg.split("=", 1)[0] not in hidden:
            shown.append(arg)
    return shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run",
        description="Recall and ingest benchmarks.",
        epilog="Example: python -m bench.run --quick --es-url http://127.0.0.1:9200",
    )
    parser.add_argument("--quick", action="store_true", help="2k and 10k events, few repetitions")
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="issue 10: ingest with the default embedder, memory_search keyword vs hybrid",
    )
    parser.add_argument(
        "--scale",
        action="store_true",
        help="issue 11: 36 monthly partitions on one node, and 3 nodes against one",
    )
    parser.add_argument(
        "--cluster-size",
        help="--scale: the heavy user's events for the 3-node comparison (default 1M; 0: keep "
        "the last run's figures)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="--scale: keep each size's history on the node, and on the next --keep run "
        "measure it again without loading it (when its count matches)",
    )
    parser.add_argument(
        "--partition",
        choices=sorted(loader.SUFFIX_CHARS),  # the periods the plain loader writes to
        help="the period of every partition the run makes, as `setup --partition` sets it "
        f"(default {DEFAULT_GRANULARITY})",
    )
    parser.add_argument("--sizes", nargs="+", help="heavy-user history sizes, e.g. 10k 100k 1M")
    parser.add_argument(
        "--enrich-up-to",
        metavar="SIZE",
        help="run `ingest` and `serve` as a default install does (the default embedder, "
        "enrichment on) at sizes up to SIZE only (default: every size); a slow encoder's "
        "enrichment of 1M events takes hours",
    )
    parser.add_argument("--es-url", default=os.environ.get("ELASTICSEARCH_URL"))
    parser.add_argument("--out-dir", type=Path, help="write report, plot and data here")
    parser.add_argument("--report", type=Path)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--work-dir", type=Path)
    parser.add_argument("--reps", type=int, help="timed calls per kind for our engine")
    parser.add_argument("--cursor-depth", type=int, help="page reached by cursor")
    parser.add_argument("--reference-budget", type=float, help="seconds per reference kind")
    args = parser.parse_args(argv)
    if not args.es_url:
        parser.error("no Elasticsearch: pass --es-url or set ELASTICSEARCH_URL")
    if args.quick and args.out_dir is None and args.report is None:
        args.out_dir = OUT / "quick"
    if not args.scale:  # the other modes run the default install beside the rest
        try:
            configuration.default().check()
        except ConfigurationError as err:
            parser.exit(1, f"Error: {err}\n")
    config = config_from(args)
    config.work_dir.mkdir(parents=True, exist_ok=True)
    client = make_client(Settings(ELASTICSEARCH_URL=args.es_url), request_timeout=120)
    try:
        check_server(client)
        command = " ".join(["python -m bench.run", *_shown(argv or sys.argv[1:])])
        run = Run(client, args.es_url, config)
        if args.scale:
            cluster = parse_size(args.cluster_size) if args.cluster_size else 1_000_000
            run.execute_scale(command, cluster or None)
        elif args.semantic:
            run.execute_semantic(command)
        else:
            run.execute(command)
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
