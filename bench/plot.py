"""Latency against history size, both approaches, log-log."""

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: choose the backend before pyplot loads

import matplotlib.pyplot as plt

from bench.recall_bench import KINDS, LABELS

_STYLE = {"ours": ("tab:blue", "-"), "reference": ("tab:red", "--")}
_MARKERS = {"page0_any": "o", "page0_all": "^", "page0_since": "v", "page10": "D", "cursor": "*"}
_NAMES = {"ours": "ours (pushed down)", "reference": "reference (client-side)"}


def plot(results: dict[str, Any], path: Path) -> None:
    sizes = sorted(results["sizes"], key=lambda s: s["heavy_events"])
    depth = results["config"]["cursor_depth"]
    figure, axes = plt.subplots(figsize=(11, 5.5), dpi=110)
    for side in ("ours", "reference"):
        colour, line = _STYLE[side]
        for kind in KINDS:
            points = [(s["heavy_events"], s[side][kind]) for s in sizes if kind in s.get(side, {})]
            if not points:
                continue
            xs = [x for x, _ in points]
            p50 = [entry["p50_ms"] for _, entry in points]
            p95 = [entry["p95_ms"] for _, entry in points]
            main = kind == "page0_any"
            label = f"{_NAMES[side]}: {LABELS[kind].format(depth=f'{depth:,}')}"
            axes.plot(
                xs,
                p50,
                linestyle=line,
                marker=_MARKERS[kind],
                color=colour,
                linewidth=2.2 if main else 0.9,
                alpha=1.0 if main else 0.55,
                label=label + " (p50)",
            )
            if main:
                axes.fill_between(xs, p50, p95, color=colour, alpha=0.15, label=f"{label}: p50-p95")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("events in the user's history")
    axes.set_ylabel("latency of one call (ms)")
    axes.set_title(
        f"cross_session_search latency, Elasticsearch {results['machine']['elasticsearch']}, "
        f"{results['machine']['cores_logical']} cores"
    )
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)


def plot_scale(results: dict[str, Any], path: Path) -> None:
    """Page 0 and the deep cursor page against the heavy user's history size."""
    sizes = sorted(results["sizes"], key=lambda s: s["heavy_events"])
    figure, axes = plt.subplots(figsize=(9, 4.5), dpi=110)
    xs = [s["heavy_events"] for s in sizes]
    for key, label, marker in (
        ("page0", "page 0", "o"),
        ("page0_fresh", "page 0, new queries", "s"),
        ("cursor", "cursor page", "*"),
    ):
        if not all(key in s for s in sizes):
            continue
        axes.plot(xs, [s[key]["p50_ms"] for s in sizes], marker=marker, label=f"{label} p50")
        axes.plot(
            xs, [s[key]["p95_ms"] for s in sizes], marker=marker, linestyle=":", linewidth=0.8,
            label=f"{label} p95",
        )  # fmt: skip
    axes.set_xscale("log")
    axes.set_xlabel("heavy user's events, over 36 monthly partitions")
    axes.set_ylabel("latency (ms)")
    axes.set_ylim(bottom=0)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    axes.set_title("cross_session_search on a partitioned history (one node)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
