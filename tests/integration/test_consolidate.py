"""`session-recall consolidate` and `memories search|list`, end to end on a real node:
the issue's "done when" on the CLI."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.core.index_names import memory_index
from tests.support.ndjson import append_ndjson, write_ndjson

pytestmark = pytest.mark.integration

BADGE = "48213977"


def _turn(n: int, user: str, session: str, day: int, text: str, type: str = "user_message"):
    return {
        "event_id": f"{user}-{n}",
        "user_id": user,
        "session_id": session,
        "timestamp": f"2026-07-{day:02d}T10:00:{n:02d}Z",
        "type": type,
        "text": text,
    }


CONVERSATION = [
    _turn(1, "alice", "s1", 1, "We decided to use PostgreSQL for billing."),
    _turn(2, "alice", "s1", 1, "Noted: PostgreSQL for billing.", "assistant_message"),
    _turn(3, "alice", "s1", 1, f"Please remember that my badge number is {BADGE}."),
    _turn(4, "alice", "s2", 8, "Actually, let's go with MySQL for billing."),
    _turn(5, "alice", "s2", 8, "What is the weather like today?"),
    _turn(1, "bob", "s1", 2, "We decided to use Oracle for billing."),
]


def _cli(es_url: str, alias: str, *args: str) -> Result:
    return CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, *args])


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _memories(es_url: str, alias: str, user: str, *args: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = _json(
        _cli(es_url, alias, "memories", "list", "--user", user, "--json", *args)
    )
    return found


def test_a_correction_supersedes_the_decision_and_recall_returns_the_current_one(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
) -> None:
    source = write_ndjson(tmp_path / "events.ndjson", CONVERSATION)
    assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0

    first = _cli(es_url, alias, "consolidate", "--user", "alice")
    assert first.exit_code == 0, first.output
    assert "5 new event(s) of 1 user(s) mined" in first.output, first.output

    current = _memories(es_url, alias, "alice")
    by_kind = {m["kind"]: m for m in current}
    assert sorted(by_kind) == ["decision", "instruction"], current
    decision = by_kind["decision"]
    assert "MySQL" in decision["statement"] and decision["sources"] == ["alice-4"]
    assert decision["supersededBy"] is None and decision["validFrom"] == "2026-07-08T10:00:04Z"
    assert set(decision) >= {"memoryId", "kind", "statement", "sources", "validFrom"}
    assert BADGE in by_kind["instruction"]["statement"]
    assert by_kind["instruction"]["sources"] == ["alice-3"]

    history = _memories(es_url, alias, "alice", "--include-superseded", "--kind", "decision")
    assert len(history) == 2
    old = next(m for m in history if "PostgreSQL" in m["statement"])
    assert old["supersededBy"] == decision["memoryId"] and old["sources"] == ["alice-1"]

    found = _json(_cli(es_url, alias, "memories", "search", "--user", "alice", "--json",
                       "which database for billing"))  # fmt: skip
    assert found[0]["memoryId"] == decision["memoryId"]
    assert all("PostgreSQL" not in m["statement"] for m in found)
    with_history = _json(_cli(es_url, alias, "memories", "search", "--user", "alice", "--json",
                              "--include-superseded", "which database for billing"))  # fmt: skip
    ids = [m["memoryId"] for m in with_history]
    assert ids[0] == decision["memoryId"] and ids[-1] == old["memoryId"], with_history
    text = _cli(es_url, alias, "memories", "search", "--user", "alice", "billing database")
    assert text.exit_code == 0 and "MySQL" in text.output, text.output

    # Bob's pass: his memory, never alice's, and alice's never his.
    assert _cli(es_url, alias, "consolidate", "--all-users").exit_code == 0
    bobs = _memories(es_url, alias, "bob", "--include-superseded")
    assert [m["sources"] for m in bobs] == [["bob-1"]] and "Oracle" in bobs[0]["statement"]
    alices = _memories(es_url, alias, "alice", "--include-superseded")
    assert all("Oracle" not in m["statement"] for m in alices)
    for user, other in (("alice", "Oracle"), ("bob", "MySQL")):
        searched = _json(_cli(es_url, alias, "memories", "search", "--user", user, "--json",
                              "--include-superseded", f"billing {other} PostgreSQL"))  # fmt: skip
        assert all(other not in m["statement"] for m in searched), searched


def test_a_second_pass_adds_nothing_and_a_new_turn_only_its_own(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
) -> None:
    source = write_ndjson(tmp_path / "events.ndjson", CONVERSATION)
    assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0
    assert _cli(es_url, alias, "consolidate", "--user", "alice").exit_code == 0
    before = _memories(es_url, alias, "alice", "--include-superseded")

    again = _cli(es_url, alias, "consolidate", "--user", "alice")
    assert again.exit_code == 0, again.output
    assert "0 new event(s)" in again.output and "0 memory(ies) kept" in again.output
    assert _memories(es_url, alias, "alice", "--include-superseded") == before

    later = [_turn(6, "alice", "s3", 9, "I prefer answers in French.")]
    append_ndjson(source, later)
    assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0
    third = _cli(es_url, alias, "consolidate", "--user", "alice")
    assert "1 new event(s) of 1 user(s) mined: 1 memory(ies) kept" in third.output, third.output
    after = _memories(es_url, alias, "alice", "--include-superseded")
    added = [m for m in after if m not in before]
    assert [(m["kind"], m["sources"]) for m in added] == [("preference", ["alice-6"])]


def test_delete_event_takes_the_instruction_and_every_trace_of_the_number(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
) -> None:
    source = write_ndjson(tmp_path / "events.ndjson", CONVERSATION)
    assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0
    assert _cli(es_url, alias, "consolidate", "--user", "alice").exit_code == 0
    assert any(BADGE in m["statement"] for m in _memories(es_url, alias, "alice"))

    removed = _cli(es_url, alias, "delete", "--user", "alice", "--event", "alice-3")
    assert removed.exit_code == 0, removed.output
    everything = f"{alias},{memory_index(alias)}"
    es.indices.refresh(index=everything)
    hits = es.search(index=everything, size=1000, query={"match_all": {}})["hits"]["hits"]
    assert hits and all(BADGE not in json.dumps(h["_source"]) for h in hits)
    assert [m["kind"] for m in _memories(es_url, alias, "alice")] == ["decision"]
    found = _json(_cli(es_url, alias, "memories", "search", "--user", "alice", "--json",
                       "--include-superseded", f"badge number {BADGE}"))  # fmt: skip
    assert all(BADGE not in json.dumps(m) for m in found)
    # Mined again, the erased turn gives nothing back.
    assert _cli(es_url, alias, "consolidate", "--user", "alice").exit_code == 0
    assert all(BADGE not in m["statement"] for m in _memories(es_url, alias, "alice"))


def test_usage_errors_say_what_to_give(es_url: str, alias: str) -> None:
    neither = _cli(es_url, alias, "consolidate")
    assert neither.exit_code == 2 and "--user" in neither.output
    both = _cli(es_url, alias, "consolidate", "--user", "a", "--all-users")
    assert both.exit_code == 2
    kind = _cli(es_url, alias, "memories", "list", "--user", "a", "--kind", "opinion")
    assert kind.exit_code == 2 and "opinion" in kind.output


def test_an_alias_without_its_memories_index_is_told_to_run_setup(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
) -> None:
    source = write_ndjson(tmp_path / "events.ndjson", CONVERSATION)
    assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0
    es.indices.delete(index=memory_index(alias))  # as an alias of an earlier release
    for args in (("consolidate", "--user", "alice"), ("memories", "list", "--user", "alice")):
        answer = _cli(es_url, alias, *args)
        assert answer.exit_code != 0 and "setup" in answer.output, (args, answer.output)
        assert "Traceback" not in answer.output
    assert not es.indices.exists(index=memory_index(alias))
    assert _cli(es_url, alias, "setup").exit_code == 0
    assert _cli(es_url, alias, "consolidate", "--user", "alice").exit_code == 0
    assert len(_memories(es_url, alias, "alice")) == 2


def test_follow_mines_new_events_until_stopped(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
) -> None:
    source = write_ndjson(tmp_path / "events.ndjson", CONVERSATION[:1])
    assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0
    program = str(Path(sys.executable).parent / "session-recall")
    command = [program, "--es-url", es_url, "--index", alias,
               "consolidate", "--follow", "--poll", "0.2"]  # fmt: skip
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as follower:
        try:
            _wait_for_memories(es, alias, 1)
            append_ndjson(source, CONVERSATION[1:])  # stored while it follows
            assert _cli(es_url, alias, "ingest", str(source), "--no-enrich").exit_code == 0
            _wait_for_memories(es, alias, 4)
        finally:
            follower.send_signal(signal.SIGTERM)
            _, errors = follower.communicate(timeout=60)
    assert follower.returncode == 0, errors
    assert "Stopped." in errors and "Traceback" not in errors


def _wait_for_memories(es: Elasticsearch, alias: str, count: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        es.indices.refresh(index=memory_index(alias))
        if es.count(index=memory_index(alias))["count"] >= count:
            return
        assert time.monotonic() < deadline, f"fewer than {count} memories were kept"
        time.sleep(0.2)
