"""What the numbers were measured on: the machine, the node, the date; and the CPU time
spent, by this process and by the node."""

import os
import platform
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil
from elasticsearch import Elasticsearch

from bench.configuration import default_embedder
from session_recall.indexer import native

# Elasticsearch's `monitor.process.refresh_interval` (1 s), plus a margin.
NODE_STATS_REFRESH_S = 1.2


def own_cpu_s() -> float:
    """CPU seconds this process has used so far (user + system, all its threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def node_cpu_s(client: Elasticsearch) -> float:
    """CPU seconds the Elasticsearch node's process has used so far (all its threads;
    work from other clients of the node counts too). The node refreshes the figure
    once a second: wait that long so it covers what just happened."""
    time.sleep(NODE_STATS_REFRESH_S)
    nodes = client.nodes.stats(
        node_id="_local", metric="process", filter_path="nodes.*.process.cpu.total_in_millis"
    ).body["nodes"]
    return sum(n["process"]["cpu"]["total_in_millis"] for n in nodes.values()) / 1000


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def revision() -> str:
    """The commit of this checkout the figures were measured on, and whether it had
    changes not committed; "unknown" outside a git checkout."""
    try:
        commit = _git("rev-parse", "--short=10", "HEAD")
        changed = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{commit} with changes not committed" if changed else commit


def _git(*args: str) -> str:
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout.strip()


def describe(client: Elasticsearch) -> dict[str, Any]:
    """The machine and the node, as plain values for the report."""
    nodes = client.nodes.info(
        node_id="_local",
        metric="jvm,os",
        filter_path="nodes.*.version,nodes.*.jvm.mem.heap_max_in_bytes,nodes.*.jvm.version",
    ).body["nodes"]
    node = next(iter(nodes.values()))
    memory = psutil.virtual_memory()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu_model": cpu_model(),
        "cores_logical": os.cpu_count(),
        "cores_physical": psutil.cpu_count(logical=False),
        "ram_gb": round(memory.total / 2**30, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "elasticsearch": node["version"],
        "es_heap_gb": round(node["jvm"]["mem"]["heap_max_in_bytes"] / 2**30, 2),
        "es_jvm": node["jvm"].get("version"),
        "load_average_start": [round(x, 2) for x in os.getloadavg()],
        "revision": revision(),
        "native_core": native.installed(),
        "default_embedder": default_embedder(),
    }
