"""`session-recall consolidate` with SESSION_RECALL_MINER=model, end to end on a real
node, against a scripted chat-completions server over real HTTP: what the model
answers is applied when it keeps to the turns and memories it was given, dropped
otherwise, and a failing model leaves the user's checkpoint before the unmined turns."""

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from elasticsearch import Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.indexer import MemoryWriter
from tests.support.json_server import json_server
from tests.support.memories import mined_memories
from tests.support.ndjson import write_ndjson

pytestmark = pytest.mark.integration

MODEL = "scripted-miner"


def _turn(n: int, user: str, day: int, text: str, type: str = "user_message") -> dict[str, Any]:
    return {
        "event_id": f"{user}-{n}",
        "user_id": user,
        "session_id": f"{user}-s{day}",
        "timestamp": f"2026-07-{day:02d}T10:00:{n:02d}Z",
        "type": type,
        "text": text,
    }


FIRST = [
    _turn(1, "alice", 1, "We decided to use PostgreSQL for billing."),
    _turn(2, "alice", 1, "Noted: PostgreSQL for billing.", "assistant_message"),
    _turn(3, "alice", 1, "My desk is on the third floor."),
    _turn(1, "bob", 2, "We decided to use Oracle for billing."),
]
LATER = [
    _turn(4, "alice", 8, "Billing moves to MySQL after all."),
    _turn(5, "alice", 8, "I moved desks, forget the floor."),
]


def _completion(operations: list[dict[str, Any]] | str) -> tuple[int, Any]:
    content = operations if isinstance(operations, str) else json.dumps({"operations": operations})
    return 200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}


def _shown(body: dict[str, Any]) -> dict[str, Any]:
    """What the request showed the model: its turns and memories."""
    shown: dict[str, Any] = json.loads(body["messages"][-1]["content"])
    return shown


def _add(statement: str, kind: str, sources: list[str], subject: str | None = None) -> dict:
    return {"op": "add", "statement": statement, "kind": kind, "subject": subject,
            "sources": sources}  # fmt: skip


def _cli(es_url: str, alias: str, url: str | None, *args: str, timeout: str = "10") -> Result:
    env = {
        "SESSION_RECALL_MINER": "model",
        "SESSION_RECALL_MINER_URL": url or "",
        "SESSION_RECALL_MINER_MODEL": MODEL,
        "SESSION_RECALL_MINER_TIMEOUT": timeout,
    }
    return CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, *args], env=env)


def _ingest(es_url: str, alias: str, path: Path, events: list[dict[str, Any]]) -> None:
    result = _cli(es_url, alias, "http://127.0.0.1:9/v1", "ingest",
                  str(write_ndjson(path, events)), "--no-enrich")  # fmt: skip
    assert result.exit_code == 0, result.output


def _memories(es_url: str, alias: str, user: str, *args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        main, ["--es-url", es_url, "--index", alias, "memories", "list", "--user", user,
               "--json", *args],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    found: list[dict[str, Any]] = json.loads(result.output)
    return found


def test_the_models_add_supersede_and_retire_are_kept_with_their_sources(
    es_url: str, alias: str, tmp_path: Path
) -> None:
    def answer(body: dict[str, Any]) -> tuple[int, Any]:
        shown = _shown(body)
        ids = [t["id"] for t in shown["turns"]]
        if ids == ["alice-1", "alice-3"]:
            return _completion([
                _add("Billing uses PostgreSQL.", "decision", ["alice-1"], "billing"),
                _add("The user's desk is on the third floor.", "fact", ["alice-3"]),
            ])  # fmt: skip
        if ids == ["bob-1"]:
            return _completion([])
        by_statement = {m["statement"]: m["memoryId"] for m in shown["memories"]}
        return _completion([
            {"op": "supersede", "memoryId": by_statement["Billing uses PostgreSQL."],
             **{k: v for k, v in _add("Billing uses MySQL.", "decision", ["alice-4"],
                                      "billing").items() if k != "op"}},
            {"op": "retire", "memoryId": by_statement["The user's desk is on the third floor."],
             "reason": "the user moved desks"},
        ])  # fmt: skip

    with json_server(answer) as (url, received):
        _ingest(es_url, alias, tmp_path / "first.ndjson", FIRST)
        first = _cli(es_url, alias, url, "consolidate", "--all-users")
        assert first.exit_code == 0, first.output
        assert "4 new event(s) of 2 user(s) mined: 2 memory(ies) kept" in first.output
        assert [[t["id"] for t in _shown(r)["turns"]] for r in received] == [
            ["alice-1", "alice-3"],
            ["bob-1"],
        ]

        _ingest(es_url, alias, tmp_path / "later.ndjson", LATER)
        later = _cli(es_url, alias, url, "consolidate", "--user", "alice")
        assert later.exit_code == 0, later.output
        assert "1 memory(ies) kept, 1 superseded, 1 retired" in later.output, later.output

    assert all(r["path"] == "/v1/chat/completions" and r["model"] == MODEL for r in received)
    # The user's turns alone, and on the later pass the nearest current memories.
    assert [t["id"] for t in _shown(received[-1])["turns"]] == ["alice-4", "alice-5"]
    shown = {m["statement"] for m in _shown(received[-1])["memories"]}
    assert shown == {"Billing uses PostgreSQL.", "The user's desk is on the third floor."}

    current = _memories(es_url, alias, "alice")
    assert [(m["statement"], m["sources"], m["origin"]) for m in current] == [
        ("Billing uses MySQL.", ["alice-4"], f"model {MODEL}")
    ]
    history = {m["statement"]: m for m in _memories(es_url, alias, "alice", "--include-superseded")}
    assert history["Billing uses PostgreSQL."]["supersededBy"] == current[0]["memoryId"]
    desk = history["The user's desk is on the third floor."]
    assert desk["retired"] == "the user moved desks" and desk["validTo"] is not None
    assert _memories(es_url, alias, "bob") == []


def test_operations_outside_the_turns_and_memories_given_are_dropped_and_counted(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
) -> None:
    _ingest(es_url, alias, tmp_path / "first.ndjson", FIRST)
    bobs = MemoryWriter(es, alias, user_id="bob").save_memory(
        "Billing uses Oracle.", "decision", ["bob-1"]
    )
    bob_id = bobs.memory.memory_id

    def answer(body: dict[str, Any]) -> tuple[int, Any]:
        return _completion([
            _add("Bob's billing runs on Oracle.", "decision", ["bob-1"]),  # another user's
            _add("Made up.", "fact", ["alice-99"]),  # no such turn
            _add("From the assistant.", "fact", ["alice-2"]),  # not a turn it was given
            _add("An opinion.", "opinion", ["alice-1"]),  # no such kind
            _add("", "fact", ["alice-1"]),  # an empty statement
            {"op": "supersede", "memoryId": bob_id, "statement": "Billing uses DB2.",
             "kind": "decision", "subject": None, "sources": ["alice-1"]},
            {"op": "retire", "memoryId": bob_id, "reason": "gone"},
            {"op": "retire", "memoryId": "no-such-memory", "reason": "gone"},
            {"op": "forget", "memoryId": bob_id},
            _add("Billing uses PostgreSQL.", "decision", ["alice-1"], "billing"),
        ])  # fmt: skip

    with json_server(answer) as (url, received):
        result = _cli(es_url, alias, url, "consolidate", "--user", "alice")
    assert result.exit_code == 0, result.output
    assert "1 memory(ies) kept" in result.output, result.output
    assert "9 operation(s) of the model dropped" in result.output, result.output
    assert len(received) == 1

    assert [(m["statement"], m["sources"]) for m in _memories(es_url, alias, "alice",
            "--include-superseded")] == [("Billing uses PostgreSQL.", ["alice-1"])]  # fmt: skip
    [bob] = _memories(es_url, alias, "bob", "--include-superseded")
    assert bob["memoryId"] == bob_id and bob["supersededBy"] is None and bob["validTo"] is None


class _Hang:
    """An answer that waits until released (the miner's deadline passes first)."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.answered = threading.Event()

    def __call__(self, body: dict[str, Any]) -> tuple[int, Any]:
        self.released.wait(timeout=30)
        self.answered.set()
        return _completion([])


FAILURES: dict[str, Callable[[], Callable[[dict[str, Any]], tuple[int, Any]]]] = {
    "status 500": lambda: lambda body: (500, {"error": "overloaded"}),
    "an answer that is not JSON": lambda: lambda body: _completion("{operations: [add"),
    "an answer that is not a chat completion": lambda: lambda body: (200, b"<html>proxy</html>"),
    "no answer within SESSION_RECALL_MINER_TIMEOUT": _Hang,
}


@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_failing_model_leaves_the_turns_for_the_next_pass_and_says_why(
    es_url: str, alias: str, tmp_path: Path, failure: str
) -> None:
    _ingest(es_url, alias, tmp_path / "first.ndjson", FIRST)
    failing = FAILURES[failure]()
    try:
        with json_server(failing) as (url, _):
            failed = _cli(es_url, alias, url, "consolidate", "--user", "alice", timeout="0.5")
    finally:
        if isinstance(failing, _Hang):
            failing.released.set()
            assert failing.answered.wait(timeout=30)
    assert failed.exit_code == 1, failed.output
    assert f"the model miner failed for 1 user(s) ({failure})" in failed.output, failed.output
    assert "left for the next pass" in failed.output
    assert "0 new event(s)" in failed.output and "Traceback" not in failed.output
    assert _memories(es_url, alias, "alice", "--include-superseded") == []

    def answer(body: dict[str, Any]) -> tuple[int, Any]:
        return _completion([_add("Billing uses PostgreSQL.", "decision", ["alice-1"])])

    with json_server(answer) as (url, received):
        again = _cli(es_url, alias, url, "consolidate", "--user", "alice")
    assert again.exit_code == 0, again.output
    # The checkpoint held: the same turns are sent again, and mined this time.
    assert [t["id"] for t in _shown(received[0])["turns"]] == ["alice-1", "alice-3"]
    assert "3 new event(s) of 1 user(s) mined: 1 memory(ies) kept" in again.output
    assert [m["sources"] for m in _memories(es_url, alias, "alice")] == [["alice-1"]]


def test_the_model_miner_is_refused_without_its_url(es_url: str, alias: str) -> None:
    result = _cli(es_url, alias, None, "consolidate", "--user", "alice")
    assert result.exit_code != 0
    assert "SESSION_RECALL_MINER=model needs" in result.output, result.output
    assert "SESSION_RECALL_MINER_URL" in result.output and "Traceback" not in result.output


def test_serve_mines_in_the_background_with_the_configured_model(settings: Settings) -> None:
    def answer(body: dict[str, Any]) -> tuple[int, Any]:
        turns = _shown(body)["turns"]
        return _completion(
            [_add(f"Mined by the model from {t['id']}.", "fact", [t["id"]]) for t in turns]
        )

    events = [e for e in FIRST if e["user_id"] == "alice"]
    with json_server(answer) as (url, received):
        configured = settings.with_overrides(miner="model", miner_url=url, miner_model=MODEL)
        with TestClient(create_app(configured, enrich=False, consolidate=True)) as web:
            assert web.post("/v1/events?refresh=wait_for", json=events).status_code == 200
            found = mined_memories(web, "alice", 2)
    assert sorted((m["statement"], m["origin"]) for m in found) == [
        ("Mined by the model from alice-1.", f"model {MODEL}"),
        ("Mined by the model from alice-3.", f"model {MODEL}"),
    ]
    assert received and all(r["model"] == MODEL for r in received)
