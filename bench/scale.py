"""Scale-out (issue 11): recall over a long partitioned history, and a 3-node cluster
against one node.

    python -m bench.run --scale                        # 10k, 1M and 10M events
    python -m bench.run --scale --sizes 10k 100k       # what a small machine affords
    python -m bench.run --scale --cluster-size 100k    # the 3-node comparison's size
    python -m bench.run --scale --cluster-size 0       # keep the last comparison's figures

Per size, one node (--es-url): a heavy user's history spread evenly over 36 monthly
partitions, plus light users (a tenth as many events again), loaded with `session-recall
ingest`. Then, for the heavy user: page 0 of cross_session_search (p50 of --reps
calls), and the cursor page at depth 10,000 (reached by following cursors; then timed
on its own), with `_shards.total` and `_shards.skipped` of each, read from the real
responses. Page 0 is also timed over --reps different queries (three words each), which
no cache of Elasticsearch has seen: what an agent's new question costs. Targets: page-0
p50 at the largest size within 2x of the smallest's, and the deep cursor page within 1.5x of page 0.

Then a local 3-node cluster (`node start --nodes 3`, 1 replica) and a single node,
both started here with the same heap, each loaded with the same file: ingest events/s
and page-0 p50. The results go into the "Scale-out" section of the report, between
markers, so the other sections are kept.
"""

import itertools
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from elasticsearch import Elasticsearch

from bench import alias_name, ingest_bench, report, sections
from bench.timing import repeat
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.node import LocalCluster, LocalNode
from session_recall.recall import CrossSessionSearcher
from session_recall.templates import install, uninstall

if TYPE_CHECKING:
    from bench.run import Run

START = "<!-- scale-out: written by python -m bench.run --scale -->"
END = "<!-- /scale-out -->"
HEAVY_USER = "heavy-user"
MONTHS = 36
FIRST = Instant.parse("2023-08-01T00:00:00Z")
SPAN_NS = Instant.parse("2026-08-01T00:00:00Z").nanos - FIRST.nanos
LIGHT_SHARE = 0.1
LIGHT_USERS = 200
DEPTH = 10_000
PAGE = 10
QUERY = "budget, deadline, we decided"
_WORDS = ["the", "we", "a", "budget", "deadline", "plan", "meeting", "decided", "go", "with",
          "next", "week", "client", "report"]  # fmt: skip
_KEY = b"bench-scale-cursor-key-32bytes!!"
_TARGET_PAGE0 = 2.0
_TARGET_CURSOR = 1.5


def events(heavy: int, *, seed: int = 11) -> Iterator[dict[str, Any]]:
    """The heavy user's events evenly over 36 months, light users' in between."""
    rng = random.Random(seed)
    light = round(heavy * LIGHT_SHARE)
    total = heavy + light
    for n in range(total):
        at = Instant(FIRST.nanos + SPAN_NS * n // total + rng.randrange(10**9))
        is_light = rng.random() < LIGHT_SHARE
        user = f"light-{rng.randrange(LIGHT_USERS):03d}" if is_light else HEAVY_USER
        words = rng.choices(_WORDS, k=rng.randint(4, 24))
        yield {
            "event_id": f"e{n:09d}",
            "user_id": user,
            "session_id": f"s-{n // 100:07d}",
            "timestamp": at.isoformat(),
            "type": "user_message",
            "text": " ".join(words),
        }


def fresh_queries(count: int) -> list[str]:
    """`count` queries of three words of the history's vocabulary, all different up to
    364 (then they repeat)."""
    triples = [", ".join(words) for words in itertools.combinations(_WORDS, 3)]
    random.Random(7).shuffle(triples)
    return (triples * (count // len(triples) + 1))[:count]


def write(path: Path, heavy: int) -> int:
    count = 0
    with path.open("wb") as sink:
        for event in events(heavy):
            sink.write(orjson.dumps(event) + b"\n")
            count += 1
    return count


class _Shards:
    """A client seam for the searchers: passes searches on, keeps each `_shards`."""

    def __init__(self, client: Elasticsearch) -> None:
        self._client = client
        self.last: list[dict[str, Any]] = []

    def search(self, **kwargs: Any) -> Any:
        response = self._client.search(**kwargs)
        self.last = [response.body.get("_shards", {})]
        return response

    def msearch(self, **kwargs: Any) -> Any:
        response = self._client.msearch(**kwargs)
        self.last = [answer.get("_shards", {}) for answer in response.body["responses"]]
        return response

    def field_caps(self, **kwargs: Any) -> Any:
        return self._client.field_caps(**kwargs)


def _searcher(client: Any, alias: str) -> CrossSessionSearcher:
    return CrossSessionSearcher(
        client, alias=alias, user_id=HEAVY_USER, cursor_key=_KEY, page_size=PAGE
    )


def recall(client: Elasticsearch, alias: str, reps: int, warmup: int) -> dict[str, Any]:
    seam = _Shards(client)
    searcher = _searcher(seam, alias)
    page0 = repeat(lambda: searcher.search(QUERY), reps=reps, warmup=warmup)
    page0_shards = seam.last[0]
    queries = iter(fresh_queries(reps))
    fresh = repeat(lambda: searcher.search(next(queries)), reps=reps)
    page, depth = searcher.search(QUERY), 0
    while page.next_cursor is not None and depth + PAGE < DEPTH:
        cursor = page.next_cursor
        page, depth = searcher.search(QUERY, cursor=cursor), depth + PAGE
    deep = repeat(lambda: searcher.search(QUERY, cursor=cursor), reps=reps, warmup=warmup)
    return {
        "page0": page0.summary(),
        "page0_shards": page0_shards,
        "page0_fresh": fresh.summary(),
        "cursor_depth": depth,
        "cursor": deep.summary(),
        "cursor_shards": seam.last[0],
    }


def run_size(run: "Run", heavy: int, earlier: dict[str, Any] | None) -> dict[str, Any]:
    """Load one size and measure it. With --keep, the alias is kept, and one kept by an
    earlier --keep run with the same count is measured again without loading it
    (its ingest figure is that run's, from `earlier`)."""
    config = run.config
    label = report.size_label(heavy)
    total = heavy + round(heavy * LIGHT_SHARE)
    kept = alias_name("scale", label.lower())
    loaded_by = None
    if config.keep and _count(run.client, kept) == total and earlier:
        alias, events_per_s = kept, earlier["ingest_events_per_s"]
        loaded_by = str(earlier.get("loaded_by", "an earlier run"))
        run.log(f"{alias}: {total:,} events kept from an earlier run; measuring again")
    else:
        alias, events_per_s = _load(run, heavy, label, kept)
    partitions = len(run.client.indices.get_alias(name=alias).body)
    result = recall(run.client, alias, config.reps, config.warmup)
    run.log(
        f"  {partitions} partitions; page 0 p50 {result['page0']['p50_ms']:.2f} ms, cursor "
        f"at {result['cursor_depth']:,} p50 {result['cursor']['p50_ms']:.2f} ms, skipped "
        f"{result['cursor_shards'].get('skipped')} of {result['cursor_shards'].get('total')}"
    )
    if not config.keep:
        run.drop(alias)
    return {
        "heavy_events": heavy,
        "events": total,
        "partitions": partitions,
        "ingest_events_per_s": events_per_s,
        "loaded_by": loaded_by or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "reused": loaded_by is not None,
        **result,
    }


def _count(client: Elasticsearch, alias: str) -> int | None:
    if not client.indices.exists_alias(name=alias):
        return None
    client.indices.refresh(index=alias)
    return int(client.count(index=alias)["count"])


def _load(run: "Run", heavy: int, label: str, kept: str) -> tuple[str, float]:
    config = run.config
    path = config.work_dir / f"scale-{label}.ndjson"
    total = write(path, heavy)
    if config.keep:
        uninstall(run.client, kept)  # a partial load of an earlier run, if any
        install(run.client, kept)
        alias = kept
    else:
        alias = run.alias(f"scale-{label.lower()}")
    home = config.work_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    run.log(f"session-recall ingest {path.name} ({total:,} events) -> {alias}")
    ingest = ingest_bench.run_ours(run.es_url, alias, path, total, home)
    run.settle(alias, total)
    path.unlink()
    return alias, ingest.events_per_s


def compare_cluster(run: "Run", heavy: int, home: Path) -> dict[str, Any]:
    """The same file into a 3-node cluster (1 replica) and into one node."""
    config = run.config
    label = report.size_label(heavy)
    path = config.work_dir / f"scale-cluster-{label}.ndjson"
    total = write(path, heavy)
    found: dict[str, Any] = {"heavy_events": heavy, "events": total}
    cluster = LocalCluster(home=home, name=f"bench-{run.run_id}-c", nodes=3)
    single = LocalNode(home=home, name=f"bench-{run.run_id}-n")
    try:
        for name, replicas, start in (
            ("three_nodes", 1, lambda: ",".join(i.url for i in cluster.start())),
            ("one_node", 0, lambda: single.start().url),
        ):
            run.log(f"starting {name}")
            url = start()
            client = make_client(Settings(ELASTICSEARCH_URL=url), request_timeout=120)
            alias = alias_name(run.run_id, name)
            install(client, alias, replicas=replicas)
            ingest = ingest_bench.run_ours(url, alias, path, total, config.work_dir / "home")
            client.indices.refresh(index=alias)
            searcher = _searcher(client, alias)
            page0 = repeat(lambda s=searcher: s.search(QUERY), reps=config.reps, warmup=3)
            found[name] = {"ingest_events_per_s": ingest.events_per_s, "page0": page0.summary()}
            run.log(f"  {name}: {ingest.events_per_s:,.0f} events/s, p50 {page0.p50():.2f} ms")
            uninstall(client, alias)
            client.close()
            (cluster.stop if name == "three_nodes" else single.stop)()
    finally:
        cluster.wipe()
        single.wipe()
        path.unlink(missing_ok=True)
    return found


def section(results: dict[str, Any], plot: Path, report_path: Path) -> str:
    sizes = results["sizes"]
    lines = [START, "## Scale-out: partitions and a cluster", ""]
    where = results["machine"]
    lines.append(
        f"Command: `{results['command']}`; {where.get('cores_logical', '?')} logical cores; "
        f"{where.get('date', '')}."
    )
    lines.append("")
    lines.append(
        "One node. A heavy user's history evenly over 36 monthly partitions, plus light "
        "users (a tenth as many events again); cross_session_search for the heavy user, "
        f"query `{QUERY}`, page size {PAGE}, p50 of {results['reps']} calls."
    )
    lines.append("")
    lines.append(
        "| heavy events | partitions | ingest events/s | page 0 p50 ms | new queries: "
        "page 0 p50 ms | shards (skipped) | cursor depth | cursor p50 ms | shards (skipped) |"
    )
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    reused = [s for s in sizes if s.get("reused")]
    for s in sizes:
        lines.append(
            f"| {s['heavy_events']:,} | {s['partitions']} | {s['ingest_events_per_s']:,.0f} "
            f"| {s['page0']['p50_ms']:.2f} | {_fresh(s)} | {_shards(s['page0_shards'])} "
            f"| {s['cursor_depth']:,} | {s['cursor']['p50_ms']:.2f} "
            f"| {_shards(s['cursor_shards'])} |"
        )
    if reused:
        lines += [
            "",
            "The histories of "
            + ", ".join(f"{s['heavy_events']:,}" for s in reused)
            + " heavy events were loaded by an earlier `--keep` run and measured again "
            "here; their ingest figures are that run's, on a machine shared with other "
            "work.",
        ]
    if sizes:
        small, large = sizes[0], sizes[-1]
        ratio = large["page0"]["p50_ms"] / small["page0"]["p50_ms"]
        deep = large["cursor"]["p50_ms"] / large["page0"]["p50_ms"]
        lines += [
            "",
            f"- page-0 p50 at {large['heavy_events']:,} / at {small['heavy_events']:,}: "
            f"{ratio:.2f}x (target at most {_TARGET_PAGE0:g}x at 10M / 10k): "
            f"{'met' if ratio <= _TARGET_PAGE0 else 'missed'}",
            f"- new queries, page-0 p50 at {large['heavy_events']:,} / at "
            f"{small['heavy_events']:,}: {_ratio(large, small, 'page0_fresh')}",
            f"- cursor page at depth {large['cursor_depth']:,} / page 0: {deep:.2f}x "
            f"(target at most {_TARGET_CURSOR:g}x): "
            f"{'met' if deep <= _TARGET_CURSOR else 'missed'}",
        ]
    cluster = results.get("cluster")
    if cluster:
        lines += [
            "",
            f"Three local nodes (1 replica) against one node (0 replicas), same heap, same "
            f"machine, {cluster['events']:,} events ({cluster['heavy_events']:,} heavy)"
            + (f", from `{cluster['command']}`:" if cluster.get("command") else ":"),
            "",
            "| | ingest events/s | page 0 p50 ms |",
            "|---|---:|---:|",
        ]
        for name in ("three_nodes", "one_node"):
            entry = cluster[name]
            lines.append(
                f"| {name.replace('_', ' ')} | {entry['ingest_events_per_s']:,.0f} "
                f"| {entry['page0']['p50_ms']:.2f} |"
            )
        lines += [
            "",
            "All nodes share this machine's cores, so three nodes cannot be faster here: "
            "each event is written twice (primary and replica) by JVMs that compete for "
            "the same CPUs. What a cluster buys is room and node loss without data loss. "
            "Both were measured on nodes started for it, right after the ingest (caches "
            "cold, segments not merged): compare these two rows with each other, not "
            "with the table above.",
        ]
    relative = os.path.relpath(plot, report_path.parent)
    lines += ["", f"![scale-out latency]({relative})", "", END, ""]
    return "\n".join(lines)


def _ratio(large: dict[str, Any], small: dict[str, Any], key: str) -> str:
    if key not in large or key not in small:
        return "not measured"
    return f"{large[key]['p50_ms'] / small[key]['p50_ms']:.2f}x"


def _fresh(size: dict[str, Any]) -> str:
    fresh = size.get("page0_fresh")
    return "–" if fresh is None else f"{fresh['p50_ms']:.2f}"


def _shards(found: dict[str, Any]) -> str:
    return f"{found.get('total', '?')} ({found.get('skipped', '?')})"


def replace_section(document: str, text: str) -> str:
    return sections.replace(document, text, start=START, end=END)


def kept_section(document: str) -> str | None:
    return sections.kept(document, start=START, end=END)
