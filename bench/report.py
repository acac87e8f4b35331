"""BENCHMARKS.md from the results of a run, with the performance targets checked."""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.recall_bench import KINDS, LABELS
from bench.serve_bench import RECALL_BLOCK

PAGE0_KINDS = ("page0_any", "page0_all", "page0_since")


def size_label(events: int) -> str:
    if events >= 1_000_000 and events % 100_000 == 0:
        return f"{events / 1_000_000:g}M"
    if events >= 1_000 and events % 100 == 0:
        return f"{events / 1_000:g}k"
    return f"{events:,}"


@dataclass(frozen=True)
class Target:
    text: str
    measured: str
    met: bool | None  # None: not measurable in this run

    @property
    def verdict(self) -> str:
        return {True: "met", False: "**missed**", None: "not measured"}[self.met]


def _p50(size: dict[str, Any], side: str, kind: str) -> float | None:
    entry = size.get(side, {}).get(kind)
    return None if entry is None else float(entry["p50_ms"])


def evaluate(results: dict[str, Any]) -> list[Target]:
    sizes = sorted(results["sizes"], key=lambda s: s["heavy_events"])
    small, large = sizes[0], sizes[-1]
    ls, ll = size_label(small["heavy_events"]), size_label(large["heavy_events"])
    targets = []

    parts, ok = [], True
    for kind in PAGE0_KINDS:
        a, b = _p50(small, "ours", kind), _p50(large, "ours", kind)
        if a is None or b is None:
            continue
        ratio = b / a
        ok &= ratio <= 2
        parts.append(f"{kind.removeprefix('page0_')}: {b:.2f} / {a:.2f} ms = {ratio:.2f}x")
    targets.append(
        Target(
            f"Our page-0 p50 at {ll} events is at most 2x our p50 at {ls}",
            "; ".join(parts) or "n/a",
            ok if parts and len(sizes) > 1 else None,
        )
    )

    parts, ok = [], True
    for kind in KINDS:
        ours, ref = _p50(large, "ours", kind), _p50(large, "reference", kind)
        if ours is None or ref is None:
            continue
        ratio = ref / ours
        ok &= ratio >= 100
        parts.append(f"{_short(kind)}: {ref:,.0f} / {ours:.2f} ms = {ratio:,.0f}x")
    targets.append(
        Target(
            f"At least 100x faster than the client-side algorithm at {ll} events",
            "; ".join(parts) or "n/a",
            ok if parts else None,
        )
    )

    parts, ok = [], True
    for size in sizes:
        cursor, page0 = _p50(size, "ours", "cursor"), _p50(size, "ours", "page0_any")
        if cursor is None or page0 is None:
            continue
        ratio = cursor / page0
        ok &= ratio <= 1.5
        parts.append(
            f"{size_label(size['heavy_events'])}: {cursor:.2f} / {page0:.2f} ms = {ratio:.2f}x"
        )
    depth = results["config"]["cursor_depth"]
    targets.append(
        Target(
            f"The cursor page at depth {depth:,} has a p50 at most 1.5x page 0's",
            "; ".join(parts) or "n/a (no size had enough matches)",
            ok if parts else None,
        )
    )

    worst: tuple[float, str] | None = None
    for size in sizes:
        for kind, entry in size.get("ours", {}).items():
            overhead = entry.get("overhead_p50_ms")
            if overhead is not None and (worst is None or overhead > worst[0]):
                worst = (overhead, f"{_short(kind)} at {size_label(size['heavy_events'])}")
    targets.append(
        Target(
            "Our p50 overhead over Elasticsearch's `took` is at most 3 ms",
            "n/a" if worst is None else f"worst: {worst[0]:.2f} ms ({worst[1]})",
            None if worst is None else worst[0] <= 3,
        )
    )

    ingest = large.get("ingest")
    if ingest:
        targets += _ingest_targets(ingest)
    serve = large.get("serve")
    if serve and ingest:
        targets += _serve_targets(serve, ingest)
    peaks = [
        (s["ingest"]["ours"]["peak_rss_mb"], size_label(s["ingest"]["ours"]["events"]))
        for s in sizes
        if s.get("ingest")
    ]
    if peaks:
        text = ", ".join(f"{mb:.0f} MB at {label}" for mb, label in peaks)
        targets.append(
            Target(
                "The indexer's peak RSS stays at most 200 MB, whatever the input size",
                text,
                max(mb for mb, _ in peaks) <= 200,
            )
        )
    return targets


def _rate_target(name: str, ours: float, other: float, floor: float, at: str = "") -> Target:
    """`ours` events/s against `other`'s: met at `floor` times or more."""
    ratio = ours / other
    return Target(name, f"{ours:,.0f} / {other:,.0f} events/s = {ratio:.2f}x{at}", ratio >= floor)


def _ingest_targets(ingest: dict[str, Any]) -> list[Target]:
    ours, raw, loader = ingest["ours"], ingest["raw"], ingest.get("loader")
    at = f" at {size_label(ours['events'])} events"
    rate = ours["events_per_s"]
    targets = []
    if loader:
        targets.append(
            _rate_target(
                "Ingest reaches at least 0.8x the plain `streaming_bulk` loader",
                rate,
                loader["events_per_s"],
                0.8,
                at,
            )
        )
    targets.append(
        _rate_target(
            "Ingest reaches at least 0.6x the raw `_bulk` throughput",
            rate,
            raw["events_per_s"],
            0.6,
            at,
        )
    )
    erased = ingest.get("ours_after_event_erasure")
    if erased:
        targets.append(
            _rate_target(
                "Ingest after an event is erased by its id keeps at least 0.9x its clean rate",
                erased["events_per_s"],
                rate,
                0.9,
                at,
            )
        )
    cpu = ours.get("cpu_us_per_event")
    if cpu is not None:
        targets.append(
            Target(
                "The ingest process spends at most 20 µs of CPU per event",
                f"{cpu:.1f} µs{at}{_floor_note(ingest)}",
                cpu <= 20,
            )
        )
    return targets


def _floor_note(ingest: dict[str, Any]) -> str:
    """The bare loop's CPU per event (`bench.floor`), when it ran: the room the target
    leaves on this machine."""
    floor = (ingest.get("floor") or {}).get("cpu_us_per_event")
    if floor is None:
        return ""
    return f"; the bare loop, with no validation or guarantees: {floor:.1f} µs"


def _recall_cpu_note(recall: dict[str, Any]) -> str:
    """What each request cost in CPU, and the rate at which that fills every core."""
    bound = recall.get("cpu_bound_requests_per_s")
    if bound is None:
        return ""
    return (
        f"; CPU per request: serve {recall['serve_cpu_ms_per_request']:.2f} ms, node "
        f"{recall['node_cpu_ms_per_request']:.2f} ms, load generator "
        f"{recall['generator_cpu_ms_per_request']:.2f} ms, which fills every core at "
        f"{bound:,.0f} requests/s"
    )


def _serve_targets(serve: dict[str, Any], ingest: dict[str, Any]) -> list[Target]:
    eight, many = serve["batches_8"], serve["batches_32"]
    loader, raw = ingest.get("loader"), ingest["raw"]
    rate = eight["events_per_s"]
    batches = "`serve` (100-event batches, 8 clients)"
    targets = []
    if loader:
        targets.append(
            _rate_target(
                f"{batches} reaches at least 0.8x the plain loader",
                rate,
                loader["events_per_s"],
                0.8,
            )
        )
    targets += [
        _rate_target(
            f"{batches} reaches at least 0.6x raw `_bulk`", rate, raw["events_per_s"], 0.6
        ),
        Target(
            f"{batches} spends at most 20 µs of CPU per event",
            f"{eight['serve_cpu_us_per_event']:.1f} µs{_floor_note(ingest)}",
            eight["serve_cpu_us_per_event"] <= 20,
        ),
        Target(
            f"{batches}: peak RSS at most 200 MB",
            f"{eight['peak_rss_mb']:.0f} MB",
            eight["peak_rss_mb"] <= 200,
        ),
        Target(
            "A single event's acknowledgement p50 is at most 20 ms (1 client)",
            f"{serve['single_1']['p50_ms']:.1f} ms",
            serve["single_1"]["p50_ms"] <= 20,
        ),
        _rate_target(
            "`serve` with 100-event batches from 32 clients reaches at least 0.7x `ingest`",
            many["events_per_s"],
            ingest["ours"]["events_per_s"],
            0.7,
        ),
    ]
    http, library = serve["recall_1"]["p50_ms"], serve["recall_library_1"]["p50_ms"]
    targets += [
        Target(
            "Recall over HTTP p50 is at most the library's p50 + 3 ms (1 client)",
            f"{http:.2f} ms over HTTP, {library:.2f} ms library (+{http - library:.2f} ms)",
            http <= library + 3,
        ),
        Target(
            "Recall over HTTP answers at least 300 requests/s (8 clients, no ingest load)",
            f"{serve['recall_8']['requests_per_s']:,.0f} requests/s"
            f"{_recall_cpu_note(serve['recall_8'])}",
            serve["recall_8"]["requests_per_s"] >= 300,
        ),
    ]
    return targets


def _short(kind: str) -> str:
    return {"page0_any": "page 0 any", "page0_all": "page 0 all", "page0_since": "since"}.get(
        kind, kind
    )


def _ms(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def render(results: dict[str, Any], *, plot: Path, report: Path) -> str:
    machine, config = results["machine"], results["config"]
    depth = config["cursor_depth"]
    lines = [
        "# Benchmarks",
        "",
        f"Written by `{config['command']}`; run it again rather than editing this file.",
        "What is measured and how: [Method](#method).",
        "",
        "## Machine",
        "",
        "| | |",
        "| --- | --- |",
        f"| CPU | {machine['cpu_model']}, {machine['cores_logical']} logical cores "
        f"({machine['cores_physical']} physical) |",
        f"| RAM | {machine['ram_gb']} GB |",
        f"| OS, Python | {machine['os']}, Python {machine['python']} |",
        f"| Elasticsearch | {machine['elasticsearch']}, single node, heap "
        f"{machine['es_heap_gb']:g} GB, JVM {machine['es_jvm']} |",
        f"| Date | {machine['date']} |",
        f"| Wall time of the run | {results['wall_s'] / 60:.1f} min |",
        f"| Load average at start / end | {machine['load_average_start']} / "
        f"{results.get('load_average_end')} |",
        "",
        "## Targets",
        "",
        "| target | measured | verdict |",
        "| --- | --- | --- |",
    ]
    for target in evaluate(results):
        lines.append(f"| {target.text} | {target.measured} | {target.verdict} |")
    relative = os.path.relpath(plot, report.parent)
    lines += ["", "## Recall latency", "", f"![latency against history size]({relative})", ""]
    for size in sorted(results["sizes"], key=lambda s: s["heavy_events"]):
        lines += _recall_section(size, depth)
    lines += _ingest_section(results)
    lines += _serve_section(results)
    lines += _method(results)
    return "\n".join(lines) + "\n"


def _recall_section(size: dict[str, Any], depth: int) -> list[str]:
    data, matches = size["dataset"], size["matches"]
    label = size_label(size["heavy_events"])
    lines = [
        f"### {label} events of history",
        "",
        f"The heavy user has {matches['history']:,} events in {data['heavy_sessions']:,} "
        f"sessions; the index holds {data['events']:,} events of "
        f"{data['light_users'] + 1:,} users. Matches: any {matches['any']:,}, "
        f"all {matches['all']:,}, any + since {matches['any_since']:,}.",
        "",
        "| call | ours p50 | ours p95 | requests | `took` p50 | overhead p50 | bare client p50 "
        "| reference p50 | reference p95 | reference / ours (p50) | reference runs |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for kind in KINDS:
        ours = size["ours"].get(kind)
        ref = size.get("reference", {}).get(kind)
        name = LABELS[kind].format(depth=f"{depth:,}")
        if ours is None:
            lines.append(
                f"| {name} | n/a: {matches['any']:,} matches make fewer than "
                f"{depth + 1:,} pages | | | | | | | | | |"
            )
            continue
        ratio = f"{ref['p50_ms'] / ours['p50_ms']:,.0f}x" if ref else "–"
        runs = "–" if ref is None else f"{ref['n']}"
        if ref is not None and ref.get("same_as_reference") is False:
            runs += " (pages differ!)"
        lines.append(
            f"| {name} | {_ms(ours['p50_ms'])} | {_ms(ours['p95_ms'])} "
            f"| {ours['requests_per_call']} | {_ms(ours['took_p50_ms'], 1)} "
            f"| {_ms(ours['overhead_p50_ms'])} "
            f"| {_ms(ours.get('client_floor_p50_ms'))} "
            f"| {_ms(ref and ref['p50_ms'], 1)} | {_ms(ref and ref['p95_ms'], 1)} "
            f"| {ratio} | {runs} |"
        )
    ref_any = size.get("reference", {}).get("page0_any")
    lines.append("")
    lines.append(
        "Milliseconds. *requests*: searches our engine sends per call. *overhead*: p50 of "
        "(latency - `took`) per call. *bare client*: the same requests through "
        "elasticsearch-py alone. "
    )
    if ref_any:
        lines[-1] += (
            f"Each reference call sent {ref_any['requests']:,} requests and brought "
            f"{ref_any['fetched']:,} events to the client for page 0 (any). "
        )
    if size.get("cursor_walk_s") is not None and "cursor" in size["ours"]:
        lines[-1] += f"Walking to the cursor once took {size['cursor_walk_s']:.1f} s."
    lines.append("")
    return lines


def _ingest_section(results: dict[str, Any]) -> list[str]:
    cores = results["machine"]["cores_logical"]
    rows = [s for s in sorted(results["sizes"], key=lambda s: s["heavy_events"]) if "ingest" in s]
    if not rows:
        return []
    lines = [
        "## Ingest",
        "",
        "| events in the file | `session-recall ingest` | after an event erasure | peak RSS "
        "| plain loader | ours / loader | raw `_bulk` | ours / raw | CPU µs/event: ingest "
        "command | loader | bare loop | node, ours | node, loader | node, raw |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | ---: |",
    ]
    for size in rows:
        ours, raw = size["ingest"]["ours"], size["ingest"]["raw"]
        loader = size["ingest"].get("loader") or {}
        floor = size["ingest"].get("floor") or {}
        erased = size["ingest"].get("ours_after_event_erasure") or {}
        loader_rate = loader.get("events_per_s")
        lines.append(
            f"| {ours['events']:,} "
            f"| {ours['events_per_s']:,.0f} events/s ({ours['seconds']:.1f} s) "
            f"| {_ms(erased.get('events_per_s'), 0)} events/s "
            f"({_ms(erased.get('seconds'), 1)} s, {_ms(erased.get('tombstone_reads'), 0)} "
            "tombstone reads) "
            f"| {ours['peak_rss_mb']:.0f} MB "
            f"| {_ms(loader_rate, 0)} events/s ({_ms(loader.get('seconds'), 1)} s) "
            f"| {_ratio(ours['events_per_s'], loader_rate)} "
            f"| {raw['events_per_s']:,.0f} events/s "
            f"({raw['seconds']:.1f} s) | {ours['events_per_s'] / raw['events_per_s']:.2f}x "
            f"| {_ms(ours.get('cpu_us_per_event'), 0)} "
            f"| {_ms(loader.get('cpu_us_per_event'), 0)} "
            f"| {_ms(floor.get('cpu_us_per_event'), 0)} "
            f"| {_ms(ours.get('node_cpu_us_per_event'), 0)} "
            f"| {_ms(loader.get('node_cpu_us_per_event'), 0)} "
            f"| {_ms(raw.get('node_cpu_us_per_event'), 0)} |"
        )
    lines += [
        "",
        "*CPU µs/event*: CPU time per event of the `session-recall ingest` process (user + "
        "system, from `wait4`), and of the Elasticsearch node during each run (its "
        "`process.cpu` stats, refreshed each second, so approximate on short runs; other "
        "clients of the node count too). The machine has "
        f"{cores} cores for both. *Plain loader*: `bench/loader.py`, what a user would "
        "write instead: `json.loads` per line, camelCase keys renamed, then "
        "`helpers.streaming_bulk` with `create`, the same id and the routing, no validation. "
        "*Bare loop*: `bench/floor.py`, the least a Python loader spends here: one loop "
        "storing the same documents, orjson per line, 2,000 to a `_bulk`, with none of "
        "`ingest`'s validation or guarantees. *After an event erasure*: the same command "
        "on another alias where one event of a user the file does not name was erased by "
        "its id first (`delete --event`), so that every write reads tombstones; *tombstone "
        "reads* are the documents the tombstone index served during the run (one per id "
        "of an `mget`), a count the machine's speed does not change.",
    ]
    summary = rows[-1]["ingest"]["ours"].get("summary")
    if summary:
        lines += ["", f"The command's own summary at the largest size: `{summary}`"]
    return [*lines, ""]


def _ratio(ours: float, other: float | None) -> str:
    return "–" if not other else f"{ours / other:.2f}x"


def _serve_section(results: dict[str, Any]) -> list[str]:
    rows = [s for s in sorted(results["sizes"], key=lambda s: s["heavy_events"]) if "serve" in s]
    if not rows:
        return []
    lines = [
        "## Serve",
        "",
        "| events | clients | `serve` events/s | / loader | / raw | / ingest | CPU µs/event: "
        "serve | node | load generator | serve peak RSS |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for size in rows:
        serve, ingest = size["serve"], size["ingest"]
        loader = (ingest.get("loader") or {}).get("events_per_s")
        for key in ("batches_8", "batches_32"):
            run = serve[key]
            lines.append(
                f"| {run['units']:,} | {run['clients']} | {run['events_per_s']:,.0f} "
                f"| {_ratio(run['events_per_s'], loader)} "
                f"| {_ratio(run['events_per_s'], ingest['raw']['events_per_s'])} "
                f"| {_ratio(run['events_per_s'], ingest['ours']['events_per_s'])} "
                f"| {run['serve_cpu_us_per_event']:.0f} | {run['node_cpu_us_per_event']:.0f} "
                f"| {run['generator_cpu_us_per_event']:.0f} | {run['peak_rss_mb']:.0f} MB |"
            )
    lines += [
        "",
        "| events | single-event ack p50 / p95 (1 client) | recall over HTTP p50 (1 client) "
        "| library p50 | recall requests/s (8 clients) | HTTP p50 (8 clients) "
        "| CPU ms/request (8 clients): serve | node | load generator "
        "| requests/s that fill the cores |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for size in rows:
        serve = size["serve"]
        single, one, eight = serve["single_1"], serve["recall_1"], serve["recall_8"]
        lines.append(
            f"| {size['serve']['batches_8']['units']:,} "
            f"| {single['p50_ms']:.1f} / {single['p95_ms']:.1f} ms "
            f"| {one['p50_ms']:.2f} ms | {serve['recall_library_1']['p50_ms']:.2f} ms "
            f"| {eight['requests_per_s']:,.0f} | {eight['p50_ms']:.2f} ms "
            f"| {_ms(eight.get('serve_cpu_ms_per_request'))} "
            f"| {_ms(eight.get('node_cpu_ms_per_request'))} "
            f"| {_ms(eight.get('generator_cpu_ms_per_request'))} "
            f"| {_ms(eight.get('cpu_bound_requests_per_s'), 0)} |"
        )
    lines += [
        "",
        "`session-recall serve` in a process of its own, a fresh alias per batch load, "
        "the events of the ingest file posted as NDJSON bodies of 100 events by "
        "`bench/serve_load.py` in another process (its CPU is the *load generator* "
        "column). Single events and recall run against the alias the 8 clients filled, "
        "once it is refreshed and its merges are done, with no other load; recall is "
        "`cross_session_search` for the heavy user (query any), the library p50 the same "
        "tool call in the benchmark's process, the two alternating in blocks of "
        f"{RECALL_BLOCK} calls. "
        "*Requests/s that fill the cores*: the machine's cores divided by the CPU one "
        "request costs `serve`, the node and the load generator together, all on this "
        "machine: the most it could answer, whatever the concurrency.",
        "",
    ]
    return lines


def _method(results: dict[str, Any]) -> list[str]:
    config = results["config"]
    depth = config["cursor_depth"]
    return [
        "## Method",
        "",
        "- **Data** (`bench/generate.py`, seed "
        f"{config['seed']}): one heavy user with N events in about N/100 sessions, light "
        f"users adding {config['light_share']:.0%} more events with contacts and inboxes; "
        "Zipf-distributed words, 4% of messages in Chinese, log-normal message lengths, "
        "timestamps in every accepted form. Each size is its own index (one shard), "
        "loaded with `session-recall ingest` and refreshed, merges settled, before timing.",
        f"- **Queries**: any = `{config['query_any']}`; all = `{config['query_all']}`; "
        "since = the newest tenth of the history. Ten events a page. "
        f"{config['reps']} timed calls per kind after {config['warmup']} untimed ones; "
        "p50 and p95 interpolate linearly.",
        f"- **Cursor**: the page at depth {depth:,} (events {depth * 10:,} to "
        f"{depth * 10 + 9:,}) is reached once by walking the cursors, checked against the "
        "same page by number, then fetched repeatedly with its cursor.",
        "- **`took`** is Elasticsearch's own time for each request, summed over the requests "
        "of one call (a first page is one `msearch`: the page and the cursor's upper bound "
        "side by side). Elasticsearch truncates `took` to whole milliseconds, so "
        "overhead = latency - `took` reads up to 1 ms high per request. **Bare client** is "
        "the same requests replayed through elasticsearch-py without our engine: what any "
        "Python caller pays for HTTP and JSON.",
        "- **Reference** (`bench/reference_recall.py`): spring-ai-session's "
        "`CrossSessionRecallTools.crossSessionSearch` against the same node: list the user's "
        "sessions (routed composite aggregation), fetch every match of each session "
        f"({config['reference_fetch_size']:,} per request, `search_after`), drop events "
        "without text, sort by instant, slice the page. Its keyword filter is our "
        "`match_phrase` per term, so both return the same page (checked on every call kind). "
        f"Timed for up to {config['reference_reps']} calls or about "
        f"{config['reference_budget_s']:.0f} s per kind (at least 5 calls); above "
        f"{size_label(config['reference_all_kinds_max'])} events only page 0 (any) runs, "
        "since the reference's cost does not depend on the page.",
        "- **Ingest**: `session-recall ingest FILE` as a subprocess, wall time from start to "
        "exit, resident memory of the process tree sampled every 20 ms. Raw `_bulk`: the "
        "same documents, ids, routing, `create`, partitions and 1,000-event chunks, "
        "serialized before the clock starts, posted sequentially with httpx on one "
        "connection into a fresh index with the same templates. Raw runs first, its index "
        "is deleted, then ours runs.",
        "- The node is shared with other work on this machine; the load averages above "
        "show how busy it was.",
    ]
