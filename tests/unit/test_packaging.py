"""The installed shape: one top-level package, and layers that only point downwards."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    done = subprocess.run(
        [*build, "--quiet", "-w", str(out), str(REPO)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    [built] = out.glob("session_recall-*.whl")
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
    """google-adk, openai-agents, langchain-core and onnxruntime come with their extras
    only (`adk`, `openai-agents`, `langchain`, `local`), and no surface of the base
    install (CLI, HTTP, MCP, the libraries) imports them."""
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
        ("onnxruntime", "local"),
        ("langchain-core", "langchain"),
    ):
        found = [r for r in requirements if r.startswith(package)]
        assert found and all(r.endswith(f'extra == "{extra}"') for r in found), found
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
