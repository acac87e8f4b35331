"""Erasure: every event of the scope goes, later arrivals are refused, and a live
ingest of the same user cannot bring anything back."""

import io
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from indexer import IngestSummary, Scope, WriterOptions, erase, ingest, read_stream
from session_recall.cli import main
from session_recall.node import wait_until
from tests.support.ndjson import event, ndjson, stored, write_ndjson

pytestmark = pytest.mark.integration


def _cli(es_url: str, alias: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, *args])
    return result.exit_code, result.output


def _events() -> list[dict]:
    alice = [
        event(i, user="alice", session=f"s{i % 2}", contact_id="c1", inbox_id="web")
        for i in range(40)
    ]
    bob = [
        event(100 + i, user="bob", session="s0", contact_id="c1", inbox_id="mail")
        for i in range(10)
    ]
    return alice + bob


@pytest.mark.parametrize(
    ("args", "removed", "left"),
    [
        (["--user", "alice"], 40, {"alice": 0, "bob": 10}),
        (["--user", "alice", "--session", "s0"], 20, {"alice": 20, "bob": 10}),
        (["--contact", "c1", "--inbox", "mail"], 10, {"alice": 40, "bob": 0}),
    ],
)
def test_delete_removes_the_scope_and_prints_the_count(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path, args, removed, left
):
    source = write_ndjson(tmp_path / "events.ndjson", _events())
    dead = str(tmp_path / "dead.ndjson")
    assert _cli(es_url, alias, "ingest", str(source), "--dead-letter", dead)[0] == 0

    code, output = _cli(es_url, alias, "delete", *args)

    assert code == 0, output
    assert output.startswith(f"Removed {removed} events of ")
    assert {user: stored(es, alias, user_id=user) for user in left} == left
    # A replay stores nothing of the erased scope and copies none of it anywhere.
    code, output = _cli(es_url, alias, "ingest", str(source), "--dead-letter", dead)
    assert code == 0, output
    assert f"rejected {removed}." in output
    assert {user: stored(es, alias, user_id=user) for user in left} == left
    assert not Path(dead).exists()


def test_erasing_twice_is_harmless(es: Elasticsearch, es_url: str, alias: str):
    assert _cli(es_url, alias, "delete", "--user", "nobody") == (
        0,
        "Removed 0 events of user 'nobody'.\n",
    )
    assert _cli(es_url, alias, "delete", "--user", "nobody")[0] == 0


@pytest.mark.parametrize(
    "args", [["--session", "s"], ["--contact", "c"], ["--user", "u", "--inbox", "i"], []]
)
def test_delete_needs_a_complete_scope(es_url: str, alias: str, args: list[str]):
    assert _cli(es_url, alias, "delete", *args)[0] == 2


@pytest.mark.slow
def test_an_erasure_during_a_live_ingest_leaves_nothing_of_the_user(
    es: Elasticsearch, alias: str, tmp_path: Path
):
    total = 24_000
    data = ndjson(event(i, user="victim" if i % 2 else "bystander") for i in range(total))
    # Small chunks keep the ingest running long after the erasure starts.
    options = WriterOptions(chunk_events=100)
    outcome: dict[str, IngestSummary | BaseException] = {}

    def run() -> None:
        try:
            outcome["first"] = ingest(
                es,
                alias,
                read_stream(io.BytesIO(data)),
                dead_letter=tmp_path / "d1",
                options=options,
            )
        except BaseException as err:
            outcome["first"] = err

    live = threading.Thread(target=run)
    live.start()
    try:
        assert wait_until(lambda: stored(es, alias, user_id="victim") > 0, timeout=60)
        assert live.is_alive(), "the ingest finished before the erasure started"
        result = erase(es, alias, Scope.user("victim"))
    finally:
        live.join(timeout=300)

    first = outcome["first"]
    assert isinstance(first, IngestSummary), first
    assert result.removed > 0
    assert first.rejected > 0, "no event was refused: the erasure did not overlap the ingest"
    assert first.dead_lettered == 0
    assert stored(es, alias, user_id="victim") == 0
    assert stored(es, alias, user_id="bystander") == total // 2

    replay = ingest(es, alias, read_stream(io.BytesIO(data)), dead_letter=tmp_path / "d2")

    assert replay.rejected == total // 2
    assert replay.already_present == total // 2
    assert stored(es, alias, user_id="victim") == 0
    assert not (tmp_path / "d1").exists() and not (tmp_path / "d2").exists()


def test_erasing_from_a_missing_alias_says_so(es_url: str):
    code, output = _cli(es_url, "t-no-such-alias-7b1e", "delete", "--user", "u")
    assert code == 1
    assert "is not an alias" in output
