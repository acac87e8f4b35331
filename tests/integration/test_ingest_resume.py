"""Checkpoints and --follow, with `session-recall ingest` as a real process."""

import os
import signal
import subprocess
from pathlib import Path

import orjson
import pytest
from elasticsearch import Elasticsearch

from session_recall.indexer.checkpoint import Position, load
from session_recall.node import wait_until
from tests.support.cli import CLI
from tests.support.ndjson import (
    append_ndjson,
    checkpoint_offset,
    duplicated_event_ids,
    event,
    stored,
    write_ndjson,
)

pytestmark = pytest.mark.integration


def _start(es_url: str, alias: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*CLI, "--es-url", es_url, "--index", alias, "ingest", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.slow
def test_an_ingest_killed_midway_resumes_from_its_checkpoint_without_loss_or_duplicates(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    total = 15_000
    source = write_ndjson(
        tmp_path / "events.ndjson", (event(i, user=f"u{i % 13}") for i in range(total))
    )
    size = source.stat().st_size
    ckpt, dead = tmp_path / "events.ckpt", tmp_path / "dead.ndjson"
    # Small chunks make the run long enough to be killed in the middle.
    args = [
        str(source),
        "--checkpoint",
        str(ckpt),
        "--dead-letter",
        str(dead),
        "--chunk-size",
        "100",
    ]

    first = _start(es_url, alias, *args)
    try:
        assert wait_until(
            lambda: checkpoint_offset(ckpt) > size // 10 or first.poll() is not None, timeout=120
        )
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()
    assert first.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    killed_at = checkpoint_offset(ckpt)
    assert 0 < killed_at < size
    assert stored(es, alias) >= sum(1 for _ in source.read_bytes()[:killed_at].splitlines())

    second = _start(es_url, alias, *args)
    output = second.communicate(timeout=300)[0].decode()

    assert second.returncode == 0, output
    read = int(output.split(",")[0].removeprefix("Read "))
    assert read < total, f"the second run must resume, not start over: {output}"
    assert stored(es, alias) == total
    assert duplicated_event_ids(es, alias) == []
    assert checkpoint_offset(ckpt) == size


def test_follow_stores_appended_events_and_stops_cleanly_on_sigterm(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    source = write_ndjson(tmp_path / "events.ndjson", (event(i) for i in range(50)))
    ckpt = tmp_path / "events.ckpt"
    run = _start(
        es_url,
        alias,
        str(source),
        "--follow",
        "--checkpoint",
        str(ckpt),
        "--dead-letter",
        str(tmp_path / "d"),
    )
    try:
        assert wait_until(lambda: stored(es, alias) == 50, timeout=60)
        append_ndjson(source, (event(i) for i in range(50, 80)))
        assert wait_until(lambda: stored(es, alias) == 80, timeout=60)
        source.rename(tmp_path / "events.ndjson.1")
        write_ndjson(source, (event(i) for i in range(80, 100)))
        assert wait_until(lambda: stored(es, alias) == 100, timeout=60)
        assert wait_until(lambda: checkpoint_offset(ckpt) == source.stat().st_size, timeout=30)
    finally:
        run.send_signal(signal.SIGTERM)
        output = run.communicate(timeout=60)[0].decode()
    assert run.returncode == 0, output
    assert (
        output.strip().splitlines()[-1] == "Read 100, indexed 100, already present 0, rejected 0."
    )
    assert load(ckpt).inode == os.stat(source).st_ino


def test_the_checkpoint_only_covers_acknowledged_events(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    # A reachable node whose July partition refuses writes (the disk-full block, a 429
    # that retrying cannot outlast): the August event is stored, the July ones are not.
    run = _start(es_url, alias, str(write_ndjson(tmp_path / "first.ndjson", [event(1)])))
    output = run.communicate(timeout=120)[0].decode()
    assert run.returncode == 0, output
    es.indices.refresh(index=alias)
    july = es.search(index=alias, query={"term": {"event_id": "e-1"}})["hits"]["hits"][0]
    august = event(2, timestamp="2026-08-01T00:00:00Z")
    source = write_ndjson(tmp_path / "events.ndjson", [august, event(3), event(4)])
    first_line = len(source.read_bytes().splitlines(keepends=True)[0])
    ckpt = tmp_path / "events.ckpt"
    block = "index.blocks.read_only_allow_delete"
    es.indices.put_settings(index=july["_index"], settings={block: True})
    try:
        args = [str(source), "--checkpoint", str(ckpt), "--no-enrich", "--max-attempts", "2"]
        refused = _start(es_url, alias, *args, "--dead-letter", str(tmp_path / "d"))
        output = refused.communicate(timeout=120)[0].decode()
        assert refused.returncode == 3, output  # unavailable; 1 means "some lines dead-lettered"
        assert "Traceback" not in output, output
        assert stored(es, alias, event_id="e-2") == 1, output
        assert stored(es, alias) == 2, "the refused July events are not stored"
        assert checkpoint_offset(ckpt) <= first_line, "the checkpoint passed a refused event"
    finally:
        es.indices.put_settings(index=july["_index"], settings={block: None})
    # Once the partition takes writes again, the run resumes and stores each event once.
    again = _start(es_url, alias, *args)
    output = again.communicate(timeout=120)[0].decode()
    assert again.returncode == 0, output
    assert stored(es, alias) == 4 and duplicated_event_ids(es, alias) == []
    assert checkpoint_offset(ckpt) == source.stat().st_size


def test_a_node_that_does_not_answer_stops_ingest_with_exit_3_before_any_checkpoint(
    es: Elasticsearch, alias: str, tmp_path: Path
):
    source = write_ndjson(tmp_path / "events.ndjson", [event(1), event(2)])
    ckpt = tmp_path / "events.ckpt"
    run = _start("http://127.0.0.1:9", alias, str(source), "--checkpoint", str(ckpt))
    output = run.communicate(timeout=120)[0].decode()
    assert run.returncode == 3, output
    assert output.startswith("Error: Elasticsearch did not answer: ConnectionError."), output
    assert "Check ELASTICSEARCH_URL" in output and "Traceback" not in output
    assert not ckpt.exists()


def test_a_quiet_producer_on_stdin_is_flushed_without_waiting_for_a_full_chunk(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    run = subprocess.Popen(
        [
            *CLI,
            "--es-url",
            es_url,
            "--index",
            alias,
            "ingest",
            "-",
            "--dead-letter",
            str(tmp_path / "d"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert run.stdin is not None
        run.stdin.write(orjson.dumps(event(1)) + b"\n")
        run.stdin.flush()  # one event, and the pipe stays open
        assert wait_until(lambda: stored(es, alias) == 1, timeout=30)
    finally:
        output = run.communicate(timeout=60)[0].decode()
    assert run.returncode == 0, output


@pytest.mark.parametrize("follow", [False, True], ids=["once", "follow"])
def test_a_file_rotated_before_its_tail_was_stored_is_finished_first_on_restart(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path, follow: bool
):
    source = write_ndjson(tmp_path / "events.ndjson", (event(i) for i in range(50)))
    ckpt, dead = tmp_path / "events.ckpt", tmp_path / "dead.ndjson"
    args = [str(source), "--checkpoint", str(ckpt), "--dead-letter", str(dead)]
    first = _start(es_url, alias, *args)
    assert first.communicate(timeout=120)[0].decode().startswith("Read 50, indexed 50")
    assert load(ckpt) == Position(offset=source.stat().st_size, inode=source.stat().st_ino)
    # The producer writes on, then the file is rotated, with no run to read the tail:
    # the checkpoint is left where a run killed before the tail was acknowledged leaves
    # it (its offset in the old inode), the state a restart has to deal with.
    append_ndjson(source, (event(i) for i in range(50, 80)))
    source.rename(tmp_path / "events.ndjson.1")
    write_ndjson(source, (event(i) for i in range(80, 100)))
    current = Position(offset=source.stat().st_size, inode=source.stat().st_ino)

    run = _start(es_url, alias, *args, *(["--follow"] if follow else []))
    try:
        if follow:
            assert wait_until(lambda: _saved(ckpt) == current, timeout=60)
    finally:
        if follow:
            run.send_signal(signal.SIGTERM)
        output = run.communicate(timeout=60)[0].decode()

    assert run.returncode == 0, output
    assert stored(es, alias) == 100, output
    assert duplicated_event_ids(es, alias) == []
    assert load(ckpt) == current
    assert "was rotated since the checkpoint: finishing" in output
    assert output.strip().splitlines()[-1] == "Read 50, indexed 50, already present 0, rejected 0."
    assert not dead.exists()


def _saved(path: Path) -> Position | None:
    try:
        return load(path)
    except Exception:  # a reader may race the rename; the next poll sees the file
        return None
