"""`session-recall delete`: erase a user, a session of a user, or a contact in an inbox
of a user."""

import click

from session_recall.cli.context import AppContext, pass_app, reports_errors
from session_recall.indexer import Scope, erase


@click.command()
@click.option("--user", required=True, help="User whose events to erase.")
@click.option("--session", help="Only this session of --user.")
@click.option("--contact", help="Only this contact of --user (with --inbox).")
@click.option("--inbox", help="Inbox of --contact.")
@pass_app
@reports_errors
def delete(
    app: AppContext,
    user: str,
    session: str | None,
    contact: str | None,
    inbox: str | None,
) -> None:
    """Remove every event of a scope. A tombstone is kept: late retries and replays of
    what was erased (events stamped before the erasure) are refused, while the
    scope's new events are stored. Prints the number of events removed.

    \b
    Example:
      session-recall delete --user alice --session s-42
    """
    scope = _scope(user, session, contact, inbox)
    result = erase(app.client, app.settings.index, scope)
    noun = "event" if result.removed == 1 else "events"
    click.echo(f"Removed {result.removed} {noun} of {scope.describe()}.")


def _scope(user: str, session: str | None, contact: str | None, inbox: str | None) -> Scope:
    if contact is None and inbox is None:
        return Scope.session(user, session) if session is not None else Scope.user(user)
    if contact is not None and inbox is not None and session is None:
        return Scope.contact(user, contact, inbox)
    raise click.UsageError("Give --user alone, with --session, or with --contact and --inbox.")
