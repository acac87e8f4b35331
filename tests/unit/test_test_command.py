"""The test command's tiers: `scripts/test --help` answers at once, and `scripts/test
--fast` runs the unit tier with no install, lint, type or docs step once .venv holds
this checkout's install."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(cwd: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path or os.environ["PATH"]}
    return subprocess.run(
        ["bash", "scripts/test", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_help_prints_its_own_usage_and_installs_nothing(tmp_path: Path):
    """In a copy of the scripts alone, where an install could not even start: the usage
    comes back, and no .venv is made."""
    shutil.copytree(REPO / "scripts", tmp_path / "scripts")
    for flag in ("--help", "-h"):
        done = _run(tmp_path, flag, path="/usr/bin:/bin")
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith("usage: scripts/test [--fast | --heavy]"), done.stdout
        assert "--fast" in done.stdout and "minute" in done.stdout, done.stdout
        assert not (tmp_path / ".venv").exists()


@pytest.mark.slow  # two runs of pytest: left out of the fast tier it checks
def test_fast_runs_the_unit_tier_alone_and_installs_only_what_changed():
    """A second `--fast` finds the install stamped: nothing is installed, linted,
    type-checked or built, and the unit tests asked for run."""
    for _ in range(2):
        done = _run(REPO, "--fast", "tests/unit/test_node_ports.py", "-q", "-p", "no:cacheprovider")
        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        assert "passed" in output, output
        for step in ("==> Lint", "==> The documentation site", "mkdocs"):
            assert step not in output, output
    assert "==> Installing" not in output, output


def test_fast_refuses_integration_paths_by_name():
    done = _run(REPO, "--fast", "tests/integration/test_setup.py")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "unit tier (tests/unit) only" in done.stderr, done.stderr
