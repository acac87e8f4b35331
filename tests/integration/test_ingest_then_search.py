"""What `ingest` stored is searchable as soon as the command returns."""

import pytest
from click.testing import CliRunner

from session_recall.cli import main
from session_recall.config import Settings
from tests.support.samples import DECIDED, SAMPLE

pytestmark = pytest.mark.integration


def test_a_search_right_after_ingest_sees_every_event(settings: Settings):
    args = ["--es-url", settings.elasticsearch_url, "--index", settings.index,
            "--home", str(settings.home)]  # fmt: skip
    runner = CliRunner()
    stored = runner.invoke(main, [*args, "ingest", str(SAMPLE)])
    assert stored.exit_code == 0, stored.output
    found = runner.invoke(main, [*args, "search", "--user", "alice", "we decided"])
    assert found.exit_code == 0, found.output
    assert found.output.startswith(f"[{DECIDED},")
