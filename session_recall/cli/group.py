"""The click group every command runs in, and the one place where a project error
becomes a message and an exit code (by its kind, through `session_recall.error_policy`).
Commands raise; none of them catches to print."""

from typing import Any

import click

from session_recall.core.errors import SessionRecallError
from session_recall.error_policy import answer


class RecallGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SessionRecallError as err:
            # As click shows its own errors: `Error: <message> <next step>` on stderr.
            click.echo(f"Error: {err}", err=True)
            ctx.exit(answer(err).exit_code)
