"""`session-recall setup`: templates and the first index behind the alias."""

import click

from session_recall.cli.context import AppContext, pass_app
from session_recall.templates import install


@click.command()
@pass_app
def setup(app: AppContext) -> None:
    """Install the index templates and create the write alias. Safe to repeat.

    \b
    Example:
      session-recall --index session-events setup
    """
    result = install(app.client, app.settings.index)
    verb = "created" if result.created_index else "kept"
    click.echo(
        f"Templates installed; alias {result.alias!r} writes to {result.write_index} ({verb})."
    )
