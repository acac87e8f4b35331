"""The README's examples, run as written, in order, against the real node."""

import os
import re
import subprocess
import sys

import pytest

from tests.support.elasticsearch import REPO
from tests.support.network import free_port

pytestmark = pytest.mark.integration

_BLOCK = re.compile(r"^```(sh|python)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def readme_examples() -> list[tuple[str, str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Using it", 1)[1].split("\n## ", 1)[0]
    return [(kind, body) for kind, body in _BLOCK.findall(section)]


def test_the_readme_has_an_example_for_each_surface():
    bodies = "\n".join(body for _, body in readme_examples())
    for surface in (
        "session-recall search ",
        "session-recall serve",
        "stdio_client",
        "CrossSessionSearcher",
        "SessionRecallMemoryService",
        "SessionRecallSession",
        "SessionRecallRetriever",
    ):
        assert surface in bodies


def test_the_readme_examples_run(es_url: str, alias: str, tmp_path):
    env = {
        **os.environ,
        "ELASTICSEARCH_URL": es_url,
        "SESSION_RECALL_INDEX": alias,
        "SESSION_RECALL_HOME": str(tmp_path),
        "SESSION_RECALL_PORT": str(free_port()),
    }
    env.pop("SESSION_RECALL_TOKEN", None)
    outputs = []
    try:
        for kind, body in readme_examples():
            command = (
                ["bash", "-euo", "pipefail", "-c", body]
                if kind == "sh"
                else [sys.executable, "-c", body]
            )
            done = subprocess.run(
                command, cwd=REPO, env=env, capture_output=True, text=True, timeout=180
            )
            assert done.returncode == 0, (
                f"{kind} example failed:\n{body}\n{done.stdout}\n{done.stderr}"
            )
            outputs.append(done.stdout)
    finally:
        subprocess.run(
            ["curl", "-s", "-X", "DELETE", f"{es_url}/{alias}-*"], capture_output=True, check=False
        )
    cli, http, mcp, library, adk, langchain, openai_agents = outputs
    assert "We decided on Lisbon" in cli and "No results found." not in cli.splitlines()[0]
    assert '"next_cursor"' in cli
    assert "s-trip\t2026-06-03T09:15:00Z\t2026-06-03T09:16:41.500Z\t4" in cli  # sessions
    assert "I need to plan the team offsite" in cli  # show
    assert "Would remove 3 events of user 'bob'; nothing was changed" in cli
    # Contact c-42 of acme, not globex's contact of the same id.
    assert "conv-101" in cli and "conv-901" not in cli
    assert '"status":"indexed"' in http.replace(" ", "")
    assert "We decided to book the venue today." in http  # posted with refresh=wait_for
    assert '"session_id":"s-http"' in http and '"event_id":"sample-001"' in http  # reads
    assert "Offsite Lisbon" in http and "conv-102" in http and "conv-901" not in http
    assert "let's go with" in mcp
    assert "s-stack" in library
    assert "without sugar" in adk  # the ADK agent, in a later session
    assert "offsite" in langchain and "Lisbon" in langchain.splitlines()[-1]
    assert "Without sugar, as you told me on Monday." in openai_agents
    assert "4 items in the session" in openai_agents  # question, call, output, answer
