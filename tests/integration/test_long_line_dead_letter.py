"""A line too long to be an event is dead-lettered with where it starts and the ids
its start holds (issue 57, item 22): a 20 MB line was dead-lettered as `"event": ""`
alone, leaving no way to tell whose event it was or where in the file it lay."""

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from tests.support import native as native_core
from tests.support.ndjson import event, ndjson, stored

pytestmark = pytest.mark.integration

HUGE = 20 * 1024 * 1024


@pytest.mark.parametrize("native_path", native_core.PATHS)
def test_a_20_mb_line_is_dead_lettered_with_its_offset_and_ids(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path, monkeypatch, native_path: str
) -> None:
    monkeypatch.setenv("SESSION_RECALL_NATIVE", native_path)
    before = ndjson([event(0), event(1)])
    # The ids first, as producers write them; the text is what makes it long.
    huge = orjson.dumps({**event(2, session="s-big"), "text": "x" * HUGE})
    source = tmp_path / "events.ndjson"
    source.write_bytes(before + huge + b"\n" + ndjson([event(3)]))
    dead = tmp_path / "dead.ndjson"

    result = CliRunner().invoke(
        main, ["--es-url", es_url, "--index", alias, "ingest", str(source), "--no-enrich",
               "--dead-letter", str(dead)],
    )  # fmt: skip

    assert result.exit_code == 1, result.output  # a line was dead-lettered
    assert "indexed 3, already present 0, rejected 1 (1 written to" in result.output
    assert stored(es, alias, user_id="alice") == 3
    [entry] = [orjson.loads(line) for line in dead.read_bytes().splitlines()]
    assert entry["event"] == ""
    assert entry["reason"] == "line 3: the line is too long to be an event; it was skipped"
    assert entry["offset"] == len(before)
    assert entry["ids"] == {"event_id": "e-2", "user_id": "alice", "session_id": "s-big"}
