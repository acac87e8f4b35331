"""The model miner's request (the body and the JSON schema sent) and its check of the
answer, without a server: the request is pure, the answer a string."""

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from session_recall.core.kept_memories import MEMORY_KINDS
from session_recall.indexer.enrichment.miner import Turn
from session_recall.indexer.enrichment.mining_answer import (
    Add,
    MinerFailed,
    Retire,
    Supersede,
    checked_operations,
)
from session_recall.indexer.enrichment.mining_request import (
    MAX_TURN_CHARS,
    SCHEMA_NAME,
    Known,
    mining_request,
    operations_schema,
)
from session_recall.indexer.enrichment.model_miner import ModelMiner

WHEN = datetime(2026, 7, 8, 10, 0, 4, tzinfo=UTC)
TURNS = [Turn("alice-4", WHEN, "user_message", "Actually, MySQL for billing. " * 200, "s2")]
KNOWN = [Known("m-1", "decision", "billing", "Billing uses PostgreSQL.")]


def test_the_request_asks_for_json_schema_output_with_the_turns_and_memories() -> None:
    body = mining_request("qwen2.5-7b-instruct", TURNS, KNOWN)

    assert body["model"] == "qwen2.5-7b-instruct" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": operations_schema()},
    }
    shown = json.loads(body["messages"][1]["content"])
    assert shown["turns"] == [
        {
            "id": "alice-4",
            "time": "2026-07-08T10:00:04+00:00",
            "text": TURNS[0].text[:MAX_TURN_CHARS],
        }
    ]
    assert shown["memories"] == [
        {"memoryId": "m-1", "kind": "decision", "subject": "billing",
         "statement": "Billing uses PostgreSQL."}
    ]  # fmt: skip


def test_the_schema_is_strict_and_names_the_three_operations() -> None:
    schema = operations_schema()
    assert schema["required"] == ["operations"] and schema["additionalProperties"] is False
    variants = schema["properties"]["operations"]["items"]["anyOf"]
    by_op = {v["properties"]["op"]["enum"][0]: v for v in variants}
    assert sorted(by_op) == ["add", "retire", "supersede"]
    for variant in variants:  # strict output: every property required, no others
        assert variant["required"] == list(variant["properties"])
        assert variant["additionalProperties"] is False
    assert by_op["add"]["properties"]["kind"]["enum"] == list(MEMORY_KINDS)
    assert set(by_op["supersede"]["properties"]) == {"memoryId", *by_op["add"]["properties"]}
    assert set(by_op["retire"]["properties"]) == {"op", "memoryId", "reason"}


def _content(*operations: dict[str, Any]) -> str:
    return json.dumps({"operations": list(operations)})


ADD = {"op": "add", "statement": "Billing uses MySQL.", "kind": "decision",
       "subject": "billing", "sources": ["alice-4"]}  # fmt: skip


@pytest.mark.parametrize(
    "operation",
    [
        {**ADD, "sources": ["bob-1"]},
        {**ADD, "sources": []},
        {**ADD, "kind": "opinion"},
        {**ADD, "statement": ""},
        {**ADD, "extra": True},
        {**ADD, "op": "supersede", "memoryId": "bobs-memory"},
        {"op": "retire", "memoryId": "bobs-memory", "reason": "gone"},
        {"op": "retire", "memoryId": "m-1", "reason": ""},
        {"op": "forget", "memoryId": "m-1"},
        "add",
    ],
)
def test_an_operation_outside_what_was_given_is_dropped(operation: Any) -> None:
    found = checked_operations(_content(operation, ADD), turn_ids={"alice-4"}, memory_ids={"m-1"})
    assert found.dropped == 1
    assert found.operations == [Add.model_validate(ADD)]


def test_the_operations_that_keep_to_what_was_given_stand_in_order() -> None:
    supersede = {**ADD, "op": "supersede", "memoryId": "m-1"}
    retire = {"op": "retire", "memoryId": "m-1", "reason": "moved"}
    found = checked_operations(
        _content(supersede, retire, ADD), turn_ids={"alice-4"}, memory_ids={"m-1"}
    )
    assert found.dropped == 0
    assert [type(o) for o in found.operations] == [Supersede, Retire, Add]


@pytest.mark.parametrize("content", ["{not json", "[]", '{"ops": []}', '{"operations": {}}', None])
def test_an_answer_not_of_the_schema_fails_the_batch(content: Any) -> None:
    with pytest.raises(MinerFailed):
        checked_operations(content, turn_ids={"alice-4"}, memory_ids=set())


def test_the_miner_posts_to_chat_completions_with_its_key() -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        message = {"role": "assistant", "content": _content(ADD)}
        return httpx.Response(200, json={"choices": [{"message": message}]})

    miner = ModelMiner(
        url="http://models.invalid/v1/", model="m", api_key="k-1",
        nearest=lambda user, turns: KNOWN, transport=httpx.MockTransport(answer),
    )  # fmt: skip
    try:
        found = miner.operations("alice", TURNS)
    finally:
        miner.close()
    assert found.operations == [Add.model_validate(ADD)] and miner.origin == "model m"
    [request] = sent
    assert str(request.url) == "http://models.invalid/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer k-1"
    assert json.loads(request.content) == mining_request("m", TURNS, KNOWN)
