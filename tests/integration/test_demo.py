"""The newcomer's path goes on after `scripts/demo`: the lines it prints at the end run
as printed in a fresh shell, find the demo's data, and stop the demo's node.

`scripts/demo` itself installs packages from the network, so the tests call the
function it ends with (`scripts/_next_steps.sh`) with what the demo would pass."""

import os
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.node import LocalNode
from session_recall.templates import install
from tests.support.elasticsearch import REPO, home_for_tests
from tests.support.samples import SAMPLE

pytestmark = pytest.mark.integration

FOUND = "We decided to invite the support team too, so let's go with the bigger venue."


def next_steps(source: str, url: str, *, home: Path, index: str) -> str:
    """What the demo prints at the end, for Elasticsearch from `source` at `url`."""
    done = subprocess.run(
        ["bash", "-c", '. scripts/_next_steps.sh && print_next_steps "$0" "$1"', source, url],
        cwd=REPO,
        env={
            "PATH": "/usr/bin:/bin",
            "REPO": str(REPO),
            "SESSION_RECALL_HOME": str(home),
            "SESSION_RECALL_INDEX": index,
        },
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


def commands(printed: str) -> list[str]:
    return [line[2:] for line in printed.splitlines() if line.startswith("  ")]


def in_a_fresh_shell(lines: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    """`lines`, run in order by a shell that inherits nothing: no variable of ours, and
    a HOME whose ~/.cache/session-recall is not the demo's."""
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", "\n".join(lines)],
        cwd=home,
        env={"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=180,
    )


def ingest_samples(url: str, index: str, home: Path) -> None:
    """What the demo does before it prints: set up the alias, ingest the samples."""
    args = ["--es-url", url, "--index", index, "--home", str(home)]
    home.mkdir(parents=True, exist_ok=True)  # as the demo makes it, for its dead letters
    for command in (["setup"], ["ingest", str(SAMPLE), "--dead-letter", str(home / "dl")]):
        result = CliRunner().invoke(main, [*args, *command])
        assert result.exit_code == 0, result.output


def test_the_printed_commands_work_as_printed_in_a_fresh_shell(
    es_url: str, alias: str, tmp_path: Path
):
    home = tmp_path / "demo-home"
    ingest_samples(es_url, alias, home)
    printed = next_steps("given", es_url, home=home, index=alias)
    assert f"export ELASTICSEARCH_URL={es_url}" in printed
    assert "nothing to stop" in printed

    done = in_a_fresh_shell(commands(printed), tmp_path)

    assert done.returncode == 0, done.stderr
    assert FOUND in done.stdout  # the search example
    assert "s-trip\t2026-06-03T09:15:00Z" in done.stdout  # the sessions example


def test_credentials_in_the_url_are_never_printed(tmp_path: Path):
    printed = next_steps("given", "https://elastic:s3cret@127.0.0.1:9200", home=tmp_path, index="x")
    assert "s3cret" not in printed
    assert "https://***@127.0.0.1:9200" in printed


def test_after_docker_the_demo_says_how_to_stop_it(tmp_path: Path):
    printed = next_steps("docker", "http://127.0.0.1:9200", home=tmp_path, index="x")
    assert commands(printed)[-1] == "docker compose down"


# The README's line that reaches the demo's node from a new shell, in the checkout.
README_LINE = re.compile(r"`(\. \.venv/bin/activate && [^`]*session-recall node start[^`]*)`")


@pytest.mark.slow
def test_the_printed_commands_find_and_stop_the_demos_own_node(tmp_path: Path):
    # The demo's local node: named "default", under the demo's home, `.cache/` of the
    # checkout (here a checkout of the tests' own, which shares this one's .venv, so
    # that a node a developer started is never touched).
    checkout = home_for_tests() / "demo-checkout"
    home = checkout / ".cache"
    node = LocalNode(home=home, name="default")
    info = node.start()
    try:
        (checkout / ".venv").unlink(missing_ok=True)
        (checkout / ".venv").symlink_to(REPO / ".venv")
        [line] = README_LINE.findall((REPO / "README.md").read_text(encoding="utf-8"))
        reached = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", f'{line}\necho "URL=$ELASTICSEARCH_URL"'],
            cwd=checkout,
            env={"HOME": str(tmp_path), "PATH": "/usr/local/bin:/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert reached.returncode == 0, reached.stderr
        assert f"URL={info.url}\n" in reached.stdout, reached.stdout  # no other node
        assert not (tmp_path / ".cache").exists(), reached.stdout

        ingest_samples(info.url, "session-demo", home)
        printed = next_steps("local", info.url, home=home, index="session-demo")
        *use, stop = commands(printed)
        assert stop == "session-recall node stop"

        # `node status` agrees with the demo: same home, same node.
        done = in_a_fresh_shell([*use, "session-recall node status", stop], tmp_path)

        assert done.returncode == 0, done.stderr
        assert FOUND in done.stdout
        assert f"{info.url}\nStopped.\n" in done.stdout
        assert node.status() is None
    finally:
        node.wipe()
        (checkout / ".venv").unlink(missing_ok=True)


def test_demo_fresh_drops_the_demos_own_alias_and_no_other(es: Elasticsearch, es_url: str):
    """`scripts/demo --fresh`: what was tried on the demo's alias (a `delete`, say) is
    gone; any other alias is refused before anything is installed or started."""
    refused = subprocess.run(
        ["bash", "scripts/demo", "--fresh"],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "SESSION_RECALL_INDEX": "my-events"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode == 2 and "drops only the demo's own alias" in refused.stderr
    assert "Installing" not in refused.stdout

    install(es, "session-demo")
    dropped = subprocess.run(
        ["bash", "-c", ". scripts/_demo_reset.sh && drop_demo_alias"],
        cwd=REPO,
        env={**os.environ, "ELASTICSEARCH_URL": es_url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dropped.returncode == 0, dropped.stderr
    assert not es.indices.exists_alias(name="session-demo")
    assert not es.indices.exists_index_template(name="session-demo")
