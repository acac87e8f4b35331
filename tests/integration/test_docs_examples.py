"""Every example of README.md and docs/ runs, as written, against a real node: each page
on an alias of its own where `setup` ran and the sample sessions are stored (what the
pages assume), its blocks in order. `tests/unit/test_docs.py` holds that no example
is left out of this run without a reason."""

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from session_recall.templates import uninstall
from tests.support.docs import Block, blocks, pages
from tests.support.elasticsearch import REPO
from tests.support.network import free_port

pytestmark = pytest.mark.integration

RUNNING = [page for page in pages() if any(block.runs for block in blocks(page))]


def _cli_output(outputs: list[str]) -> None:
    [cli] = outputs
    assert "We decided on Lisbon" in cli and "No results found." not in cli.splitlines()[0]
    assert '"next_cursor"' in cli
    assert "s-trip\t2026-06-03T09:15:00Z\t2026-06-03T09:16:41.500Z\t4" in cli  # sessions
    assert "I need to plan the team offsite" in cli  # show
    assert "Would remove 3 events of user 'bob'; nothing was changed" in cli
    assert "conv-101" in cli and "conv-901" not in cli  # acme's c-42, not globex's


def _http_output(outputs: list[str]) -> None:
    [http] = outputs
    assert '"status":"indexed"' in http.replace(" ", "")
    assert "We decided to book the venue today." in http  # posted with refresh=wait_for
    assert '"session_id":"s-http"' in http and '"event_id":"sample-001"' in http  # reads
    assert "Offsite Lisbon" in http and "conv-102" in http and "conv-901" not in http


def _frameworks_output(outputs: list[str]) -> None:
    adk, _ingest, langchain, openai_agents = outputs
    assert "without sugar" in adk  # the ADK agent, in a later session
    assert "offsite" in langchain and "Lisbon" in langchain.splitlines()[-1]
    assert "Without sugar, as you told me on Monday." in openai_agents
    assert "4 items in the session" in openai_agents  # question, call, output, answer


def _partition_row(month: str, events: int) -> str:
    """A line of `session-recall partitions` for a month of 2026 (not its size)."""
    start = f"2026-{month}-01T00:00:00Z"
    end = f"2026-{int(month) + 1:02d}-01T00:00:00Z"
    return rf"-2026\.{month} +{start} +{end} +{events} "


def _concepts_output(outputs: list[str]) -> None:
    ingest, partitions = outputs
    # The replay from stdin stores nothing twice (the first run's count depends on
    # the checkpoint a previous run left in /tmp).
    assert "Read 23, indexed 0, already present 23, rejected 0." in ingest, ingest
    assert "Removed 1 event of session 's-bob-2' of user 'bob'." in ingest, ingest
    assert re.search(_partition_row("07", 10), partitions), partitions  # 11 before the delete
    assert "Would delete 0 partition(s), 0 event(s); nothing was changed." in partitions
    assert "Deleted 0 partition(s), 0 event(s)." in partitions


def _operations_output(outputs: list[str]) -> None:
    tokens, migrate, compact = outputs
    assert '"session_id":"s-trip"' in tokens, tokens  # alice's own; bob's and an erasure were 403
    assert migrate.count("Nothing to move: every index behind") == 2, migrate
    assert re.search(_partition_row("06", 10), migrate), migrate
    assert re.search(_partition_row("07", 11), migrate), migrate
    # Three ended partitions hold the samples; how many segments each has varies.
    planned = re.search(
        r"Would merge (\d+) partition\(s\) \((\d+) already in one segment\)", compact
    )
    merged = re.search(
        r"Merged (\d+) partition\(s\) into one segment each \((\d+) already", compact
    )
    assert planned and merged, compact
    assert sum(map(int, planned.groups())) == sum(map(int, merged.groups())) == 3, compact


def _readme_output(outputs: list[str]) -> None:
    cli, python, http, _mcp, frameworks = outputs
    assert "We decided on Lisbon" in cli and "postgres" in cli.lower()
    assert "postgres" in python.lower()
    assert '"status":"indexed"' in http.replace(" ", "") and "Book the Lisbon venue." in http
    assert "LangChain:" in frameworks and "Remember: tea, no sugar." in frameworks


CHECKS: dict[str, Callable[[list[str]], None]] = {
    "README.md": _readme_output,
    "docs/cli.md": _cli_output,
    "docs/concepts.md": _concepts_output,
    "docs/operations.md": _operations_output,
    "docs/http.md": _http_output,
    "docs/mcp.md": lambda outputs: _contains(outputs[1], "let's go with"),
    "docs/python.md": lambda outputs: _contains(outputs[0], "s-stack"),
    "docs/frameworks.md": _frameworks_output,
    "docs/memory-search.md": lambda outputs: _contains(outputs[0], "Postgres"),
}


def _contains(output: str, text: str) -> None:
    assert text in output, output


def _run(block: Block, env: dict[str, str]) -> str:
    if block.lang == "json":
        json.loads(block.body)  # a configuration a reader copies: it must be JSON
        return block.body
    command = (
        ["bash", "-euo", "pipefail", "-c", block.body]
        if block.lang == "sh"
        else [sys.executable, "-c", block.body]
    )
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{block} failed:\n{block.body}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_what_each_page_prints_is_checked():
    """A page's examples must print what the page says, not only exit 0."""
    assert sorted(RUNNING) == sorted(CHECKS)


@pytest.mark.parametrize("page", RUNNING)
def test_the_examples_of_each_page_run(page: str, es: Elasticsearch, es_url: str, tmp_path: Path):
    # Words joined by `_`: `setup` refuses a dash before a digit (`core.index_names`).
    alias = f"docs-{re.sub(r'[^a-z0-9]+', '_', page.lower())[:30]}_{uuid.uuid4().hex[:6]}"
    env = {
        **os.environ,
        "ELASTICSEARCH_URL": es_url,
        "SESSION_RECALL_INDEX": alias,
        "SESSION_RECALL_HOME": str(tmp_path),
        "SESSION_RECALL_PORT": str(free_port()),
        # A model fetched once serves every page (Maven keeps the artifact too).
        "SESSION_RECALL_MODELS": str(REPO / ".cache" / "models"),
    }
    env.pop("SESSION_RECALL_TOKEN", None)
    env.pop("SESSION_RECALL_EMBEDDER", None)
    seed = "session-recall setup >/dev/null && session-recall ingest samples/sessions.ndjson"
    seeded = subprocess.run(["bash", "-c", seed], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=300)  # fmt: skip
    assert seeded.returncode == 0, seeded.stderr
    try:
        outputs = [_run(block, env) for block in blocks(page) if block.runs]
    finally:
        uninstall(es, alias)
    check = CHECKS.get(page)
    if check is not None:
        check(outputs)
