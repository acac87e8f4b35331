"""A partition the cluster will not create costs only its own events: `serve` goes on
storing every other event and recovers by itself once the cause is gone, `ingest`
dead-letters them with the cluster's reason and ends with its summary. And no
producer can make a partition per month since 1970 (the window of accepted times, the
cap on new partitions)."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.core.partitions import parse_partition
from session_recall.http import create_app
from session_recall.indexer import Scope, tombstone_index
from session_recall.indexer.tombstones import record
from tests.support import native as native_core
from tests.support.ndjson import event, stored, write_ndjson

pytestmark = pytest.mark.integration

OLD_MONTH = "2022-03-15T10:00:00Z"  # within the window; no partition for it yet
SHARD_LIMIT = "maximum normal shards open"  # the cluster's own words


@contextmanager
def no_room_for_another_shard(es: Elasticsearch) -> Iterator[None]:
    """The cluster's shard limit set to the shards open now: the next index is refused
    (a real condition, as a full cluster or a tight limit gives)."""
    open_shards = es.cluster.health()["active_shards"]
    es.cluster.put_settings(persistent={"cluster.max_shards_per_node": open_shards})
    try:
        yield
    finally:
        es.cluster.put_settings(persistent={"cluster.max_shards_per_node": None})


def _partitions(es: Elasticsearch, alias: str) -> list[str]:
    names = es.indices.get_alias(name=alias).body
    return sorted(name for name in names if parse_partition(alias, name) is not None)


def test_serve_refuses_only_the_events_of_a_partition_the_cluster_will_not_create(
    settings: Settings, es: Elasticsearch, alias: str, caplog: pytest.LogCaptureFixture
):
    with TestClient(create_app(settings)) as web, caplog.at_level(logging.INFO):
        assert web.post("/v1/events", json=event(1)).status_code == 200  # this month's
        with no_room_for_another_shard(es):
            old = web.post("/v1/events", json=event(2, user="bob", timestamp=OLD_MONTH))
            current = web.post("/v1/events", json=event(3, user="carol"))
            again = web.post("/v1/events", json=event(4, user="bob", timestamp=OLD_MONTH))
            ready = web.get("/readyz")

        assert old.status_code == 422, old.text
        [result] = old.json()["results"]
        assert result["status"] == "rejected"
        assert "could not be created" in result["reason"] and SHARD_LIMIT in result["reason"]
        assert "400" in result["reason"]  # the status the cluster answered
        assert current.status_code == 200, "another user's event of this month is stored"
        assert again.status_code == 422, again.text
        assert ready.status_code == 200 and ready.json()["status"] == "degraded"
        [(partition, reason)] = ready.json()["refused_partitions"].items()
        assert partition.endswith("2022.03") and SHARD_LIMIT in reason

        # The limit lifted: the same event is stored, and readiness is plain again.
        retried = web.post("/v1/events", json=event(2, user="bob", timestamp=OLD_MONTH))
        assert retried.status_code == 200, retried.text
        assert web.get("/readyz").json()["status"] == "ready"

    logged = [r for r in caplog.records if "refused to create the partition" in r.getMessage()]
    assert len(logged) == 1, "logged once, not once per request"
    es.indices.refresh(index=alias)
    assert stored(es, alias) == 3


def _ingest(es_url: str, alias: str, *args: str) -> Result:
    options = ["--index", alias, "--es-url", es_url]
    return CliRunner().invoke(main, [*options, "ingest", *args])


@pytest.mark.parametrize("native", native_core.PATHS)
def test_ingest_dead_letters_a_refused_partitions_events_and_stores_the_rest(
    es_url: str, es: Elasticsearch, alias: str, tmp_path: Path, monkeypatch, native: str
):
    monkeypatch.setenv("SESSION_RECALL_NATIVE", native)
    source = write_ndjson(
        tmp_path / "events.ndjson",
        [event(1), event(2, timestamp=OLD_MONTH), event(3)],
    )
    dead = tmp_path / "dead.ndjson"
    # This month's partition first, while there is room for it.
    assert _ingest(es_url, alias, str(write_ndjson(tmp_path / "first", [event(0)]))).exit_code == 0
    with no_room_for_another_shard(es):
        result = _ingest(es_url, alias, str(source), "--dead-letter", str(dead))

    assert result.exit_code == 1, result.output
    assert "Read 3, indexed 2, already present 0, rejected 1" in result.output
    [line] = dead.read_bytes().splitlines()
    letter = orjson.loads(line)
    assert letter["event"]["timestamp"] == OLD_MONTH
    assert "line 2: its partition" in letter["reason"] and SHARD_LIMIT in letter["reason"]

    # Once the cluster has room, the dead letters replay into place.
    replay = write_ndjson(tmp_path / "replay.ndjson", [orjson.loads(line)["event"]])
    assert _ingest(es_url, alias, str(replay), "--dead-letter", str(dead)).exit_code == 0
    assert stored(es, alias) == 4


def _months(first_year: int, day: str, count: int) -> list[str]:
    return [f"{first_year + m // 12}-{m % 12 + 1:02d}-{day}T00:00:00Z" for m in range(count)]


def _ingest_one_a_month(
    es_url: str, alias: str, tmp_path: Path, months: list[str], *options: str
) -> tuple[Result, Path]:
    """An event stamped at each of `months`, ingested with `options`; the result and
    the dead-letter file."""
    events = [event(i, timestamp=t) for i, t in enumerate(months)]
    source, dead = write_ndjson(tmp_path / "events.ndjson", events), tmp_path / "dead.ndjson"
    return _ingest(es_url, alias, str(source), "--dead-letter", str(dead), *options), dead


def test_a_producer_stamping_every_month_since_1970_cannot_use_up_the_shards(
    es_url: str, es: Elasticsearch, alias: str, tmp_path: Path
):
    """1,000 events, one a month from 1970: only those within the window are stored
    (a year back here, to keep the test short; ten years by default), the rest
    dead-lettered with the setting to change."""
    months = _months(1970, "01", 1000)
    before = len(_partitions(es, alias))

    result, dead = _ingest_one_a_month(es_url, alias, tmp_path, months, "--max-age-days", "365")

    assert result.exit_code == 1, result.output
    summary = result.output.strip().splitlines()[-1]
    letters = [orjson.loads(line) for line in dead.read_bytes().splitlines()]
    refused = {letter["event"]["timestamp"] for letter in letters}
    accepted = sorted(set(months) - refused)
    today = datetime.now(UTC)
    year_ago = (today - timedelta(days=365)).strftime("%Y-%m-%d")
    tomorrow = (today + timedelta(days=1)).strftime("%Y-%m-%d")
    assert accepted and year_ago <= accepted[0][:10] and accepted[-1][:10] <= tomorrow
    assert len(accepted) in (12, 13)
    for letter in letters:
        assert ("more than 365 days before now; to store older events, raise --max-age-days"
                in letter["reason"]) or "after now" in letter["reason"]  # fmt: skip
    assert f"indexed {len(accepted)}," in summary and f"rejected {len(letters)}" in summary
    assert len(_partitions(es, alias)) - before <= 13


def test_a_run_creates_no_more_partitions_than_its_cap(
    es_url: str, es: Elasticsearch, alias: str, tmp_path: Path
):
    before = len(_partitions(es, alias))

    result, dead = _ingest_one_a_month(
        es_url, alias, tmp_path, _months(2020, "10", 12), "--max-new-partitions", "5"
    )

    assert result.exit_code == 1, result.output
    assert "indexed 5, already present 0, rejected 7" in result.output
    assert len(_partitions(es, alias)) - before == 5
    reasons = [orjson.loads(line)["reason"] for line in dead.read_bytes().splitlines()]
    assert len(reasons) == 7
    assert all("--max-new-partitions" in reason for reason in reasons)


def test_writes_that_fail_for_every_event_are_answered_reported_and_recover(
    settings: Settings, es: Elasticsearch, alias: str
):
    """A tombstone index that cannot be read (closed here; a key without `read` on it
    gives the same) fails every write: each request is answered with the cluster's
    reason, `/readyz` says so, and writes work again once it can be read."""
    record(es, alias, Scope.user("someone-else"), erased_at=Instant.parse(OLD_MONTH))
    with TestClient(create_app(settings)) as web:
        es.indices.close(index=tombstone_index(alias))
        try:
            failed = web.post("/v1/events", json=event(1))
            ready = web.get("/readyz")
        finally:
            es.indices.open(index=tombstone_index(alias), wait_for_active_shards="1")
        stored_after = web.post("/v1/events", json=event(1))
        ready_after = web.get("/readyz")

    # Retried, then given up on: unavailable (503, Retry-After), named as such.
    assert failed.status_code == 503, failed.text
    assert "could not read the tombstones" in failed.json()["error"]
    assert ready.status_code == 503 and "writes are failing" in ready.json()["reason"]
    assert stored_after.status_code == 200, stored_after.text
    assert ready_after.json()["status"] == "ready"
