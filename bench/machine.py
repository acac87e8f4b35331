"""What the numbers were measured on: the machine, the node, the date."""

import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil
from elasticsearch import Elasticsearch


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


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
    }
