"""The README and the documentation site, without a node: the README stays short,
nothing it held before the site is lost, and every example either runs in
tests/integration/test_docs_examples.py or says why not."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from session_recall.cli import COMMANDS, main
from tests.support.docs import EXAMPLES, JVM_EXAMPLES, NOT_EXAMPLES, blocks, headings, pages
from tests.support.elasticsearch import REPO

# The sections of the README before the site (its last long form): each is now a
# section of a page of docs/.
FORMER_README_SECTIONS = (
    "The two commands",
    "Using it",
    "The command line",
    "HTTP (`session-recall serve`)",
    "MCP",
    "Python",
    "Google ADK",
    "LangChain",
    "OpenAI Agents SDK",
    "Semantic recall (`memory_search`)",
    "Enrichment: stems, context and vectors",
    "The static model: WordLlama `l2_supercat`, from the `wordllama` wheel",
    "Local transformer encoders: `e5-small` (the default), `bge-small`, `minilm`",
    "Quality: the evaluation set",
    "Speed (`python -m bench.run --semantic`, 2 cores shared with other engineers' runs)",
    "Benchmarks",
    "What it needs",
    "Configuration",
    "Ingesting events",
    "The local node",
    "A secured node, and least-privilege roles",
    "Roles: one credential per part",
    "Index layout",
    "Moving from the single-index layout",
    "Sizing",
    "Pointing at an existing cluster",
)


def test_the_readme_is_short():
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 150, f"README.md has {lines} lines; move the detail to a page of docs/"


def test_every_section_the_readme_held_is_a_section_of_the_site():
    on_site = {heading for page in pages()[1:] for heading in headings(page)}
    missing = [section for section in FORMER_README_SECTIONS if section not in on_site]
    assert not missing, f"sections no page of docs/ holds: {missing}"


def test_every_page_of_docs_is_in_the_navigation():
    listed = set(pages())
    on_disk = {f"docs/{p.relative_to(REPO / 'docs')}" for p in (REPO / "docs").rglob("*.md")}
    assert on_disk <= listed, f"pages outside mkdocs.yml's nav: {sorted(on_disk - listed)}"


def test_every_example_runs_or_says_why_not():
    """A block is an example (sh, python, json) that the suite runs, or one whose fence
    is preceded by `<!-- not run: REASON -->`, or configuration or output (yaml, text).
    Anything else (no language, `console`, `bash`) is refused: it would go unrun."""
    found = [block for page in pages() for block in blocks(page)]
    unknown = [str(b) for b in found if b.lang not in (*EXAMPLES, *NOT_EXAMPLES, *JVM_EXAMPLES)]
    assert not unknown, f"blocks of a language the suite does not run or know: {unknown}"
    unexplained = [str(b) for b in found if b.not_run is not None and not b.not_run.strip()]
    assert not unexplained, f"'not run' without a reason: {unexplained}"
    mislabelled = [str(b) for b in found if b.not_run is not None and b.lang not in EXAMPLES]
    assert not mislabelled, f"'not run' on a block that is no example: {mislabelled}"
    assert sum(b.runs for b in found) >= 15  # the pages' examples are found at all


def _default_cells(html: str) -> dict[str, set[str]]:
    """Each option's cells of the Default column, from the CLI page's option tables."""
    cells: dict[str, set[str]] = {}
    for row in re.findall(r"<tr>(.*?)</tr>", html, re.S):
        columns = re.findall(r"<td>(.*?)</td>", row, re.S)
        names = re.findall(r"<code>(-[^<]*)</code>", columns[0]) if len(columns) == 4 else []
        for option in names:
            cells.setdefault(option, set()).add(columns[3].strip())
    return cells


@pytest.mark.slow  # the docs step: `scripts/test --fast` leaves it out
def test_the_reference_pages_are_generated_from_the_code(tmp_path):
    """`mkdocs build --strict` passes, and the CLI and HTTP references hold every
    command's options and every path as the code defines them now: an option added to
    a command is on the site with no edit to docs/. Each option's default is the one
    it has (click's UNSET sentinel, what an option given none holds, is never shown)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    for command in (
        [sys.executable, "scripts/docs_inputs.py"],
        [
            str(Path(sys.executable).with_name("mkdocs")),
            "build",
            "--strict",
            "-q",
            "-d",
            str(tmp_path),
        ],
    ):
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    cli = (tmp_path / "cli" / "index.html").read_text(encoding="utf-8")
    context = click.Context(main)
    for name in COMMANDS:
        command = main.get_command(context, name)
        assert command is not None
        subcommands = getattr(command, "commands", {}).values() or [command]
        for each in subcommands:
            for param in each.params:
                if getattr(param, "hidden", False):
                    continue  # kept for old scripts, not offered
                for option in getattr(param, "opts", []):
                    if option.startswith("--"):
                        assert option in cli, f"{name} {option} is not on the CLI page"
                default = param.to_info_dict()["default"]
                if isinstance(param, click.Option) and isinstance(default, str | int):
                    shown = _default_cells(cli).get(param.opts[-1], set())
                    assert f"<code>{default}</code>" in shown, (name, param.opts, shown)
    assert "Sentinel" not in cli and "UNSET" not in cli
    # The HTTP page sets each path parameter apart: `/v1/users/<span ...>{user}</span>`.
    http = re.sub(
        r"<span[^>]*>([^<]*)</span>",
        r"\1",
        (tmp_path / "http" / "index.html").read_text(encoding="utf-8"),
    )
    document = json.loads((REPO / "docs" / "reference" / "openapi.json").read_text())
    for path in document["paths"]:
        assert path in http, f"{path} is not on the HTTP page"


def test_every_java_block_is_a_section_of_the_spring_ai_modules_tests():
    """So the Maven tests run exactly the code the page shows."""
    found = [b for page in pages() for b in blocks(page) if b.lang in JVM_EXAMPLES]
    tests = "clients/spring-ai/src/test/java/"
    for block in found:
        include = block.body.strip()
        assert include.startswith('--8<-- "' + tests) and include.count("\n") == 0, str(block)
        path, section = include.removeprefix('--8<-- "').removesuffix('"').split(":")
        source = (REPO / path).read_text(encoding="utf-8")
        assert f"--8<-- [start:{section}]" in source, f"{block}: no section {section} in {path}"
    assert found, "the Spring AI page shows its code"
