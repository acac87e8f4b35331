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
        except click.NoSuchOption as err:
            raise self._misplaced(err) or err from None
        except SessionRecallError as err:
            self._fail(ctx, err)
        except Exception as err:
            # A refusal of the credentials or of the certificate, wherever it met the
            # command: what to do about it, never a traceback. Imported here: `--help`
            # and `--version` import neither the client nor the libraries.
            from elasticsearch import ApiError, TransportError

            from session_recall.client import access_problem
            from session_recall.security.roles import needed_by

            if not isinstance(err, ApiError | TransportError):
                raise
            command = ctx.invoked_subcommand or ""
            settings = getattr(ctx.obj, "settings", None)
            alias = repr(settings.index) if settings is not None else "the alias"
            problem = access_problem(err, needed=needed_by(command), alias=alias)
            if problem is None:
                raise
            self._fail(ctx, problem)

    @staticmethod
    def _fail(ctx: click.Context, err: SessionRecallError) -> None:
        # As click shows its own errors: `Error: <message> <next step>` on stderr.
        click.echo(f"Error: {err}", err=True)
        ctx.exit(answer(err).exit_code)

    def _misplaced(self, err: click.NoSuchOption) -> click.UsageError | None:
        """An option of the group given after the command: say where it goes, rather
        than click's guess at a command option with a similar name."""
        mine = {name for param in self.params for name in (*param.opts, *param.secondary_opts)}
        if err.option_name not in mine:
            return None
        if err.ctx is None:
            return None
        program = err.ctx.find_root().info_name or "session-recall"
        command = err.ctx.command_path.removeprefix(program).strip()
        return click.UsageError(
            f"{err.option_name} is an option of {program} itself: give it before the "
            f"command, as in `{program} {err.option_name} ... {command} ...`.",
            ctx=err.ctx,
        )
