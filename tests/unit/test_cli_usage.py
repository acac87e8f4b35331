"""Usage errors exit 2 before any request.

The commands point at a port where nothing listens: had one sent a request first, it
would have failed with exit 1 and "did not answer" instead.
"""

from pathlib import Path

import pytest
from click.testing import CliRunner

from session_recall.cli import main

NOWHERE = "http://127.0.0.1:9"


def _cli(home: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--es-url", NOWHERE, "--index", "any-alias",
                                       "--home", str(home), *args])  # fmt: skip
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-", "--follow"], "--checkpoint and --follow need a FILE"),
        (["-", "--checkpoint", "x"], "--checkpoint and --follow need a FILE"),
        (["no/such/file.ndjson"], "cannot read no/such/file.ndjson"),
        ([], "Missing argument"),
    ],
)
def test_ingest_usage_errors_exit_2(tmp_path: Path, args: list[str], says: str):
    code, output = _cli(tmp_path, "ingest", *args)
    assert code == 2, output
    assert says in output


@pytest.mark.parametrize(
    "args", [["--session", "s"], ["--contact", "c"], ["--user", "u", "--inbox", "i"], []]
)
def test_delete_needs_a_complete_scope(tmp_path: Path, args: list[str]):
    code, output = _cli(tmp_path, "delete", *args)
    assert code == 2, output
    assert "Give --user [--session], or --contact with --inbox." in output


def test_a_command_that_passes_its_checks_does_send_a_request(tmp_path: Path):
    # What the exit 2 above rules out: a request to NOWHERE is exit 1, "did not answer".
    code, output = _cli(tmp_path, "delete", "--user", "u")
    assert code == 1, output
    assert "did not answer" in output
