"""SESSION_RECALL_NATIVE: unset, the native core is used where it is installed, and the
Python path taken where it is not; =1 asks for the core, and a run stops, saying so,
where it is not installed, rather than take the Python path behind the operator's back.

The core is made absent for real: a package of the same name, first on PYTHONPATH,
that fails to import, as an uninstalled one does."""

import os
import subprocess
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from tests.support.cli import CLI
from tests.support.ndjson import event, stored, write_ndjson

pytestmark = pytest.mark.integration


def _run(
    tmp_path: Path, es_url: str, alias: str, setting: str | None, *args: str
) -> subprocess.CompletedProcess[str]:
    hidden = tmp_path / "hidden"
    (hidden / "session_recall_native").mkdir(parents=True, exist_ok=True)
    (hidden / "session_recall_native" / "__init__.py").write_text("raise ImportError('absent')\n")
    env = {k: v for k, v in os.environ.items() if k != "SESSION_RECALL_NATIVE"}
    env["PYTHONPATH"] = os.pathsep.join([str(hidden), str(Path.cwd())])
    env["SESSION_RECALL_HOME"] = str(tmp_path / "home")
    if setting is not None:
        env["SESSION_RECALL_NATIVE"] = setting
    command = [*CLI, "--es-url", es_url, "--index", alias, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_ingest_asked_for_an_absent_native_core_stops_and_says_so(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    source = write_ndjson(tmp_path / "events.ndjson", [event(1), event(2)])

    done = _run(tmp_path, es_url, alias, "1", "ingest", str(source), "--no-enrich")

    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("Error: SESSION_RECALL_NATIVE=1 asks for the native core")
    assert "pip install ./native" in done.stderr and "Traceback" not in done.stderr
    es.indices.refresh(index=alias)
    assert stored(es, alias) == 0


def test_ingest_takes_the_python_path_where_the_core_is_absent_and_not_asked_for(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    source = write_ndjson(tmp_path / "events.ndjson", [event(1), event(2)])

    done = _run(tmp_path, es_url, alias, None, "ingest", str(source), "--no-enrich")

    assert done.returncode == 0, done.stderr
    es.indices.refresh(index=alias)
    assert stored(es, alias) == 2


def test_serve_asked_for_an_absent_native_core_does_not_start(
    es_url: str, alias: str, tmp_path: Path
):
    done = _run(tmp_path, es_url, alias, "1", "serve", "--port", "0")

    assert done.returncode == 3, done.stderr
    # After the warning that it takes no token, the one line that stops it.
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: SESSION_RECALL_NATIVE=1 asks for the native core"), last
    assert "Traceback" not in done.stderr
