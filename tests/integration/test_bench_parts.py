"""The benchmark harness's small parts run, so they do not rot: the floor loop and the
enrichment timed against a stand-in server. Its quick runs end to end are heavy runs
(`bench/checks/test_bench_runs.py`, `scripts/test --heavy`).

No timing is asserted: the numbers depend on the machine. Only that every event was
stored or enriched, and that each run cleaned up after itself.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from bench.endpoint_overhead import measure_enrichment
from bench.floor import main as floor_main
from bench.session_documents import measure as measure_session_documents
from session_recall.config import Settings
from tests.support.ndjson import event

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.parametrize("partition", ["month", "year"])
def test_the_floor_loop_stores_every_event_and_cleans_up(
    es: Elasticsearch,
    es_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    partition: str,
):
    path = tmp_path / "events.ndjson"
    camel = {"userId": "bob", "sessionId": "s-b", "eventId": "b-1"}
    lines = [json.dumps(event(i)) for i in range(50)]
    lines.append(
        json.dumps({**camel, "timestamp": "2026-07-02T10:00:00+02:00", "type": "t", "text": "x"})
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    assert floor_main([str(path), "--es-url", es_url, "--partition", partition]) == 0

    assert "51 events, stored 51:" in capsys.readouterr().out
    assert not es.indices.get(index="bench-floor-*", allow_no_indices=True).body


def test_the_floor_loop_stopped_with_sigterm_deletes_its_alias(
    es: Elasticsearch, es_url: str, tmp_path: Path
):
    path = tmp_path / "events.ndjson"
    # Enough events that the loop is still sending when it is stopped.
    path.write_text("".join(json.dumps(event(i)) + "\n" for i in range(400_000)))
    command = [sys.executable, "-m", "bench.floor", str(path), "--es-url", es_url]
    repo = Path(__file__).resolve().parents[2]
    with subprocess.Popen(command, cwd=repo, stdout=subprocess.PIPE) as loop:
        deadline = time.monotonic() + 120
        while not _indexed(es, "bench-floor-*"):
            assert loop.poll() is None, "the loop ended before it was stopped"
            assert time.monotonic() < deadline, "the loop stored nothing within 120 s"
            time.sleep(0.1)  # between two looks; the deadline bounds the wait
        loop.terminate()
        assert loop.wait(timeout=60) == 143
    assert not es.indices.get(index="bench-floor-*", allow_no_indices=True).body


def _indexed(es: Elasticsearch, pattern: str) -> int:
    """Documents written so far to the indices `pattern` names. Unlike a count, this
    does not fail while a partition the loop has just created has no started shard."""
    stats = es.indices.stats(index=pattern, metric="indexing")
    return stats["_all"]["primaries"].get("indexing", {}).get("index_total", 0)


def test_an_enrichment_pass_is_timed_against_a_stand_in_server(es: Elasticsearch, es_url: str):
    run = measure_enrichment(300, 5, es_url)
    assert run["events"] == 300, "every generated event was enriched"
    assert run["server_s"] > 0 and run["seconds"] > 0
    leftover = es.indices.get_alias(index="bench-endpoint-enrichment-*", ignore_unavailable=True)
    assert not leftover.body, "the run dropped its alias"


def test_the_session_documents_cost_is_measured_on_both_sides(es: Elasticsearch, es_url: str):
    settings = Settings(ELASTICSEARCH_URL=es_url, SESSION_RECALL_EMBEDDER="static")
    run = measure_session_documents(100, 1, settings)
    assert run["events"] > 100 and run["ratio"] > 0
    assert [r["enriched"] for r in run["runs"]["on"]] == [run["events"]]
    # One document per session of the events, written once per page they were on.
    assert 0 < run["documents_per_event"] < 1
    assert [r["documents_written"] for r in run["runs"]["off"]] == [0]
    leftover = es.indices.get_alias(index="bench-sdocs-*", ignore_unavailable=True)
    assert not leftover.body, "the run dropped its aliases"
