"""`bench.run --partition year`: the baselines write to the same partitions as ours."""

import json
from pathlib import Path

import orjson
import pytest

from bench import ingest_bench, loader
from tests.support.ndjson import event

STAMPS = ("2025-03-31T23:59:59Z", "2025-11-02T08:00:00.5+02:00", "2026-01-01T00:00:00Z")


@pytest.fixture
def events_file(tmp_path: Path) -> Path:
    path = tmp_path / "events.ndjson"
    lines = [json.dumps({**event(i), "timestamp": stamp}) for i, stamp in enumerate(STAMPS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _raw_indices(events_file: Path, out: Path, partition: str) -> list[str]:
    prepared = ingest_bench.prepare_bulk(events_file, "a", out, partition)  # type: ignore[arg-type]
    lines = out.read_bytes().splitlines()
    assert prepared.events == len(STAMPS)
    return [orjson.loads(header)["create"]["_index"] for header in lines[::2]]


@pytest.mark.parametrize(
    ("partition", "expected"),
    [("month", ["a-2025.03", "a-2025.11", "a-2026.01"]), ("year", ["a-2025", "a-2025", "a-2026"])],
)
def test_the_loader_and_the_raw_bodies_name_the_partitions_ours_would(
    events_file: Path, tmp_path: Path, partition: str, expected: list[str]
):
    assert _raw_indices(events_file, tmp_path / "bodies.bin", partition) == expected
    chars = loader.SUFFIX_CHARS[partition]
    assert [a["_index"] for a in loader.actions(str(events_file), "a", chars)] == expected
