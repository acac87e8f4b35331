"""Every limit of `serve` is a flag, an environment variable and a row of the
configuration table (docs/getting-started.md); inconsistent limits are refused."""

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from session_recall.cli import main
from session_recall.http.limits import ServeLimits, envvar
from tests.support.elasticsearch import REPO


@pytest.mark.parametrize("name", list(ServeLimits.model_fields))
def test_each_limit_is_a_flag_with_its_variable_and_a_readme_row(name: str):
    flag = f"--{name.replace('_', '-')}"
    help_text = CliRunner().invoke(main, ["serve", "--help"]).output
    assert flag in help_text and envvar(name) in help_text
    table = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert f"| `{envvar(name)}` | `serve {flag}` |" in table


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"max_events_per_request": 200, "max_pending_events": 100}, "could never be taken"),
        ({"max_body_bytes": 4096, "max_inflight_bytes": 2048}, "could never be read"),
        ({"write_deadline": 0}, "greater than 0"),
    ],
)
def test_inconsistent_limits_are_refused(values: dict[str, int], message: str):
    with pytest.raises(ValidationError, match=message):
        ServeLimits(**values)


def test_a_bad_limit_from_the_environment_is_a_usage_error():
    result = CliRunner().invoke(
        main, ["serve"], env={"SESSION_RECALL_MAX_EVENTS_PER_REQUEST": "1000000"}
    )
    assert result.exit_code == 2, result.output
    assert "could never be taken" in result.output
