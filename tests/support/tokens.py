"""Tokens as an operator issues them: `session-recall tokens issue`, in process."""

from collections.abc import Mapping

from click.testing import CliRunner

from session_recall.cli import main


def issue_token(env: Mapping[str, str], *args: str) -> str:
    """The token `tokens issue ARGS` prints, with `env` (its home and alias) set."""
    done = CliRunner().invoke(main, ["tokens", "issue", *args], env=dict(env))
    assert done.exit_code == 0, done.output
    return done.stdout.strip().splitlines()[-1]
