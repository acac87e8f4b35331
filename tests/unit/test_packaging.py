"""The installed shape: one top-level package, and layers that only point downwards."""

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from session_recall.core.extras import DISTRIBUTION

REPO = Path(__file__).resolve().parents[2]
# `session-recall` on the package index is an unrelated project with a package and a
# command of the same names as ours.
OTHER_PROJECT = "session-recall"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    done = subprocess.run(
        [*build, "--quiet", "-w", str(out), str(REPO)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    [built] = out.glob("session_recall_es-*.whl")
    return built


def test_the_wheel_holds_exactly_one_top_level_package(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {
        name.split("/", 1)[0] for name in names if not name.split("/", 1)[0].endswith(".dist-info")
    }
    assert tops == {"session_recall"}
    for expected in (
        "session_recall/indexer/writer.py",
        "session_recall/recall/pager.py",
        "session_recall/mappings/index-template.json",
        "session_recall/core/instant.py",
        "session_recall/embeddings/static.py",
        "session_recall/pinned.env",
    ):
        assert expected in names


def test_the_unpacked_wheel_imports_its_own_libraries(wheel: Path, tmp_path: Path):
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import session_recall.recall, session_recall.indexer, session_recall.mappings as m;"
        "import session_recall.embeddings;"
        "assert session_recall.recall.__file__.startswith(sys.argv[1]);"
        "assert m.mapping_update()['properties']"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_importing_the_libraries_loads_no_application_code():
    code = (
        "import sys, session_recall.recall, session_recall.indexer;"
        "loaded = sorted(m for m in sys.modules if m.startswith('session_recall.')"
        " and m.split('.')[1] not in ('core', 'recall', 'indexer', 'embeddings'));"
        "print(loaded, 'pydantic_settings' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[] False"


def test_the_import_contract_holds():
    done = subprocess.run(
        [Path(sys.executable).with_name("lint-imports"), "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_the_base_install_neither_requires_nor_imports_an_agent_framework(wheel: Path):
    """google-adk, openai-agents and langchain-core come with their extras only (`adk`,
    `openai-agents`, `langchain`), onnxruntime (the default encoder's runtime) with the
    base install, and no surface of the base install (CLI, HTTP, MCP, the libraries)
    imports any of them until it is used."""
    metadata = zipfile.ZipFile(wheel).read(
        next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA"))
    )
    requirements = [
        line.removeprefix("Requires-Dist: ").replace("'", '"')
        for line in metadata.decode().splitlines()
        if line.startswith("Requires-Dist: ")
    ]
    for package, extra in (
        ("google-adk", "adk"),
        ("openai-agents", "openai-agents"),
        ("langchain-core", "langchain"),
    ):
        found = [r for r in requirements if r.startswith(package)]
        assert found and all(r.endswith(f'extra == "{extra}"') for r in found), found
    assert [r for r in requirements if r.startswith("onnxruntime")] == ["onnxruntime>=1.20"]
    code = (
        "import sys, session_recall.cli, session_recall.http, session_recall.mcp_server,"
        " session_recall.recall, session_recall.indexer, session_recall.integrations,"
        " session_recall.embeddings;"
        "from session_recall.cli import main;"
        "print(sorted(m for m in sys.modules"
        " if m.split('.')[0] in"
        " ('google', 'agents', 'openai', 'onnxruntime', 'langchain_core')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_distribution_is_named_session_recall_es(wheel: Path, tmp_path: Path):
    """Installed with pip (a wheel built from the checkout), the distribution is
    session-recall-es, with the `session-recall` command and the `session_recall` package."""
    target = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--target", str(target), str(REPO)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    code = (
        "import importlib.metadata as m, sys;"
        "d = m.distribution(sys.argv[1]);"
        "print(d.metadata['Name'], [e.name for e in d.entry_points])"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code, DISTRIBUTION],
        capture_output=True, text=True, env={"PYTHONPATH": str(target)}, check=True,
    )  # fmt: skip
    assert shown.stdout.split(" ", 1)[0] == DISTRIBUTION == "session-recall-es"
    assert shown.stdout.split(" ", 1)[1].strip() == "['session-recall']"
    assert (target / "session_recall" / "__init__.py").is_file()
    [metadata] = (n for n in zipfile.ZipFile(wheel).namelist() if n.endswith("/METADATA"))
    assert f"Name: {DISTRIBUTION}\n" in zipfile.ZipFile(wheel).read(metadata).decode()


# Up to the end of the command: a backtick, a line end, a comment or a shell operator.
_PIP_INSTALL = re.compile(r"pip install\s(?P<args>[^`\n#;&|]*)")
_SCANNED = {".py", ".md", ".sh", ".toml", ".yml", ".yaml", ".txt", ""}


def _install_lines() -> list[tuple[str, str]]:
    listed = ["git", "ls-files", "--cached", "--others", "--exclude-standard"]
    tracked = subprocess.run(
        listed, cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    found = []
    for name in tracked:
        path = REPO / name
        if path.suffix not in _SCANNED or not path.is_file() or path.is_symlink():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [(name, m["args"]) for m in _PIP_INSTALL.finditer(text)]
    return found


def _arguments(args: str) -> list[str]:
    """The words of a `pip install` line that are not options, as written (quotes kept)."""
    return [word for word in args.split() if not word.lstrip("'\"").startswith("-")]


def test_every_install_line_installs_this_project_with_its_brackets_quoted():
    """No line tells a reader to install the other project (by its name, which pip
    resolves on the package index), and every extra's brackets are quoted (zsh would
    glob them)."""
    lines = _install_lines()
    assert len(lines) >= 8  # the hints, help texts, docstrings and pages are found at all
    wrong, unquoted = [], []
    for where, args in lines:
        for word in _arguments(args):
            bare = word.strip("'\"().,;:")
            name = re.sub(r"[-_.]+", "-", re.split(r"[\[<>=!~ ]", bare, maxsplit=1)[0]).lower()
            if name == OTHER_PROJECT:
                wrong.append(f"{where}: pip install {args}")
            if "[" in word and word[0] not in "'\"":
                unquoted.append(f"{where}: pip install {args}")
    assert not wrong, f"install lines naming {OTHER_PROJECT!r}, another project: {wrong}"
    assert not unquoted, f"extras whose brackets zsh would glob: {unquoted}"
