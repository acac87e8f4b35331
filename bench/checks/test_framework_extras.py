"""Each framework's page, followed as a new user follows it: its install line alone, in
a fresh environment, then its examples as written, against the real node. No other
extra is needed (the default encoder's runtime comes with the default install), the
examples print no warning of the frameworks' own, and run again they print the same.

pip installs from its cache here (the package index where the cache lacks a package):
offline, leave these out with `-m 'not network'`."""

import itertools
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from session_recall.templates import uninstall
from tests.support.docs import Block, blocks
from tests.support.elasticsearch import REPO

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.network]

PAGE = "docs/frameworks.md"
_INSTALL = re.compile(r"`(pip install -e '\.\[(?P<extra>[a-z-]+)\]')`")
# Each framework's import: the one its extra brings, and no other page's.
IMPORTS = {"adk": "google.adk", "langchain": "langchain_core", "openai-agents": "agents"}
# Warnings the frameworks print on their own, which the examples must not provoke.
NOISE = ("Skipping missing token usage metadata", "OPENAI_API_KEY is not set")


def _sections() -> dict[str, tuple[str, list[Block]]]:
    """Each extra the page installs: its install line and the examples of its section."""
    text = (REPO / PAGE).read_text(encoding="utf-8")
    starts = [m.start() for m in re.finditer(r"^## ", text, re.MULTILINE)] + [len(text)]
    found = {}
    for start, end in itertools.pairwise(starts):
        install = _INSTALL.search(text, start, end)
        if install is None:
            continue
        first, last = text.count("\n", 0, start) + 1, text.count("\n", 0, end) + 1
        examples = [b for b in blocks(PAGE) if first <= b.line <= last and b.runs]
        found[install["extra"]] = (install[1], examples)
    return found


SECTIONS = _sections()


def _adk(outputs: list[str]) -> None:
    [answer] = outputs
    assert "without sugar" in answer, answer


def _langchain(outputs: list[str]) -> None:
    _ingest, retrieved = outputs
    assert "offsite" in retrieved and "Lisbon" in retrieved.splitlines()[-1], retrieved


def _openai_agents(outputs: list[str]) -> None:
    [run] = outputs
    assert "Without sugar, as you told me on Monday." in run, run
    assert "4 items in the session" in run, run  # question, call, output, answer


CHECKS: dict[str, Callable[[list[str]], None]] = {
    "adk": _adk,
    "langchain": _langchain,
    "openai-agents": _openai_agents,
}


def test_every_framework_section_is_checked():
    assert sorted(SECTIONS) == sorted(CHECKS) == sorted(IMPORTS)
    assert all(examples for _, examples in SECTIONS.values()), SECTIONS


def _env(folder: Path, **more: str) -> dict[str, str]:
    """What each command of an extra's page runs with: its fresh environment first."""
    return {
        "PATH": f"{folder / 'venv' / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", str(folder)),
        "LANG": "C.UTF-8",
        "SESSION_RECALL_HOME": str(folder / "home"),
        # The default encoder's weights, fetched once for every test that needs them.
        "SESSION_RECALL_MODELS": str(REPO / ".cache" / "models"),
        **{k: v for k, v in os.environ.items() if k.startswith(("PIP_", "JAVA", "ES_JAVA"))},
        **more,
    }


def _install(extra: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """A fresh environment in `folder`, then the page's install line in the checkout,
    with that environment's pip."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    install, _ = SECTIONS[extra]
    return subprocess.run(
        ["bash", "-c", install], cwd=REPO, env=_env(folder), capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip


@pytest.fixture(scope="module")
def installs(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, tuple[Path, Future[subprocess.CompletedProcess[str]]]]]:
    """Every extra's install, all begun at once: each mostly waits on pip's reads, and
    the three together take about as long as the longest."""
    with ThreadPoolExecutor(len(CHECKS)) as pool:
        folders = {extra: tmp_path_factory.mktemp(f"extra-{extra}") for extra in sorted(CHECKS)}
        yield {
            extra: (folder, pool.submit(_install, extra, folder))
            for extra, folder in folders.items()
        }


@pytest.mark.parametrize("extra", sorted(CHECKS))
def test_each_extra_alone_runs_its_pages_examples(
    extra: str,
    es: Elasticsearch,
    es_url: str,
    installs: dict[str, tuple[Path, Future[subprocess.CompletedProcess[str]]]],
) -> None:
    _, examples = SECTIONS[extra]
    folder, installing = installs[extra]
    venv = folder / "venv"
    alias = f"extras_{extra.replace('-', '_')}_{uuid.uuid4().hex[:6]}"  # no dash: setup's rule
    env = _env(folder, ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=alias)
    done = installing.result(timeout=900)
    assert done.returncode == 0, done.stderr
    others = [name for other, name in IMPORTS.items() if other != extra]
    probe = f"import importlib.util as u; print([m for m in {others!r} if u.find_spec(m)])"
    alone = subprocess.run(
        [venv / "bin" / "python", "-c", probe], env=env, capture_output=True, text=True
    )
    assert alone.stdout.strip() == "[]", alone.stdout + alone.stderr  # that extra alone

    setup = subprocess.run(
        ["session-recall", "setup"], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert setup.returncode == 0, setup.stdout + setup.stderr
    try:
        for _ in range(2):  # run again, it prints the same
            outputs = []
            for block in examples:
                command = (
                    ["bash", "-euo", "pipefail", "-c", block.body]
                    if block.lang == "sh"
                    else [str(venv / "bin" / "python"), "-c", block.body]
                )
                ran = subprocess.run(
                    command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300
                )
                assert ran.returncode == 0, f"{block}:\n{ran.stdout}\n{ran.stderr}"
                for noise in NOISE:
                    assert noise not in ran.stdout + ran.stderr, f"{block}:\n{ran.stderr}"
                outputs.append(ran.stdout)
            CHECKS[extra](outputs)
    finally:
        uninstall(es, alias)
