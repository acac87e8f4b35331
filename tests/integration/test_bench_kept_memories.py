"""The kept-memories bench at a tiny size: it mines, enriches, saves and recalls, writes
its section between its markers, keeps the rest of the report, and cleans up."""

from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from bench import kept_memories

pytestmark = pytest.mark.integration


def test_the_bench_measures_mining_and_recall_and_writes_its_section(
    es: Elasticsearch, es_url: str, tmp_path: Path
):
    report = tmp_path / "BENCHMARKS.md"
    report.write_text("# Benchmarks\n\nEarlier sections stay.\n", encoding="utf-8")
    before = set(es.indices.get_alias(index="bench_kept_*", ignore_unavailable=True).body)
    code = kept_memories.main(
        ["--es-url", es_url, "--events", "400", "--memories", "30", "--queries", "5",
         "--report", str(report), "--work-dir", str(tmp_path / "work")]
    )  # fmt: skip
    assert code == 0
    text = report.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nEarlier sections stay.\n")
    section = kept_memories.kept_section(text)
    assert section is not None and "## Kept memories: mining and recall speed" in section
    assert "`python -m bench.kept_memories --events 400 --memories 30 --queries 5`" in section
    assert es_url not in section
    assert "with 30 memories" in section and "| `recall_memories` (memories only) | " in section
    after = set(es.indices.get_alias(index="bench_kept_*", ignore_unavailable=True).body)
    assert after == before  # the bench's alias and indices are gone
