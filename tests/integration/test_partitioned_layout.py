"""The partitioned layout on a real node: every event in its own period's partition,
so a replay however late stores nothing twice; partitions listed and pruned."""

from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from tests.support.ndjson import duplicated_event_ids, event, stored, write_ndjson

pytestmark = pytest.mark.integration


def _run(es_url: str, alias: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, *args])
    return result.exit_code, result.output


def _in_month(i: int, month: str) -> dict:
    return event(i, timestamp=f"{month}-{1 + i % 28:02d}T12:00:{i % 60:02d}.000000001Z")


def _partitions(es: Elasticsearch, alias: str) -> dict[str, int]:
    es.indices.refresh(index=alias)
    rows = es.cat.indices(index=f"{alias}-2*", format="json", h="index,docs.count").body
    return {row["index"]: int(row["docs.count"]) for row in rows}


def test_a_replay_after_later_months_were_added_stores_nothing_twice(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    months = ["2026-03", "2026-04", "2026-05"]
    first = [_in_month(i, months[i % 3]) for i in range(300)]
    later = [_in_month(i, ["2026-06", "2026-07"][i % 2]) for i in range(300, 400)]
    source = write_ndjson(tmp_path / "three-months.ndjson", first)

    assert _run(es_url, alias, "ingest", str(source))[0] == 0
    assert _run(es_url, alias, "ingest", str(write_ndjson(tmp_path / "later", later)))[0] == 0
    replay = _run(es_url, alias, "ingest", str(source))

    assert replay == (0, "Read 300, indexed 0, already present 300, rejected 0.\n")
    assert stored(es, alias) == 400
    assert duplicated_event_ids(es, alias) == []
    counts = _partitions(es, alias)
    assert [counts[f"{alias}-{m.replace('-', '.')}"] for m in months] == [100, 100, 100]


def test_an_event_older_than_every_partition_lands_in_its_own_month(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    recent = write_ndjson(tmp_path / "recent", [_in_month(i, "2026-07") for i in range(10)])
    old = write_ndjson(tmp_path / "old", [event(99, timestamp="2019-03-05T08:00:00Z")])
    assert _run(es_url, alias, "ingest", str(recent))[0] == 0

    assert _run(es_url, alias, "ingest", str(old))[0] == 0
    replayed = _run(es_url, alias, "ingest", str(old))

    assert replayed[1] == "Read 1, indexed 0, already present 1, rejected 0.\n"
    assert _partitions(es, alias)[f"{alias}-2019.03"] == 1
    mapping = es.indices.get_mapping(index=f"{alias}-2019.03").body
    assert mapping[f"{alias}-2019.03"]["mappings"]["_routing"] == {"required": True}


def test_partitions_are_listed_and_pruned_only_with_yes(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    events = [_in_month(i, m) for i, m in enumerate(["2025-11", "2025-12", "2026-01"] * 4)]
    assert _run(es_url, alias, "ingest", str(write_ndjson(tmp_path / "e", events)))[0] == 0
    es.indices.refresh(index=alias)

    code, listing = _run(es_url, alias, "partitions")
    assert code == 0, listing
    line = next(row for row in listing.splitlines() if row.startswith(f"{alias}-2025.12 "))
    assert line.split()[1:4] == ["2025-12-01T00:00:00Z", "2026-01-01T00:00:00Z", "4"]

    code, dry = _run(es_url, alias, "prune", "--before", "2026-01-01")
    assert code == 0, dry
    assert "Would delete 2 partition(s), 8 event(s); nothing was changed" in dry
    assert stored(es, alias) == 12

    code, done = _run(es_url, alias, "prune", "--before", "2026-01-01", "--yes")
    assert code == 0, done
    assert "Deleted 2 partition(s), 8 event(s)." in done
    assert stored(es, alias) == 4
    assert f"{alias}-2026.01" in _partitions(es, alias)


def _segments(es: Elasticsearch, alias: str) -> dict[str, tuple[int, int]]:
    """Each partition's segments and deleted documents, as Elasticsearch reports them."""
    stats = es.indices.stats(index=alias, metric="segments,docs", level="indices").body
    return {
        index: (entry["primaries"]["segments"]["count"], entry["primaries"]["docs"]["deleted"])
        for index, entry in stats["indices"].items()
    }


def test_compact_merges_each_ended_partition_into_one_segment_and_keeps_every_event(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    months = ["2025-11", "2025-12", "2026-01"]
    for batch in range(3):  # three bulks, each made searchable: a segment apiece
        events = [_in_month(batch * 30 + i, months[i % 3]) for i in range(30)]
        events += [event(1000 + batch, user="bob", timestamp=f"2025-12-0{batch + 1}T09:00:00Z")]
        source = write_ndjson(tmp_path / f"batch-{batch}.ndjson", events)
        assert _run(es_url, alias, "ingest", "--no-enrich", str(source))[0] == 0
        es.indices.refresh(index=alias)
    assert _run(es_url, alias, "delete", "--user", "bob")[0] == 0
    es.indices.refresh(index=alias)
    names = {m: f"{alias}-{m.replace('-', '.')}" for m in months}
    before = _segments(es, alias)
    assert all(before[names[m]][0] >= 2 for m in months), before

    code, dry = _run(es_url, alias, "compact", "--before", "2026-01-01", "--dry-run")
    assert code == 0, dry
    assert f"{names['2025-11']}: 30 event(s), {before[names['2025-11']][0]} segments" in dry
    assert "Would merge 2 partition(s) (0 already in one segment); nothing was changed" in dry
    assert _segments(es, alias) == before

    code, done = _run(es_url, alias, "compact", "--before", "2026-01-01")
    assert code == 0, done
    assert f"{names['2025-12']}: 30 event(s), {before[names['2025-12']][0]} segments -> 1" in done
    assert "Merged 2 partition(s) into one segment each (0 already in one segment)." in done
    after = _segments(es, alias)
    assert after[names["2025-11"]][0] == after[names["2025-12"]][0] == 1
    assert after[names["2026-01"]] == before[names["2026-01"]]  # its period had not ended
    assert stored(es, alias) == 90  # bob's erased events stay erased
    assert duplicated_event_ids(es, alias) == []
    found = _run(es_url, alias, "memory-search", "--user", "alice", "--mode", "keyword", "31")
    assert found[0] == 0 and "message 31 about the weather" in found[1], found

    code, again = _run(es_url, alias, "compact")  # now: every period above has ended
    assert code == 0, again
    assert again.splitlines()[-1].startswith("Merged 1 partition(s)"), again
    assert _run(es_url, alias, "compact") == (0, "Nothing to merge: 3 already in one segment.\n")
