"""`session-recall delete`: erase a user, a session, or a contact in an inbox."""

import click
from pydantic import ValidationError

from session_recall.cli.context import AppContext, pass_app
from session_recall.indexer import Scope, erase


@click.command()
@click.option("--user", help="User whose events to erase.")
@click.option("--session", help="Only this session of --user.")
@click.option("--contact", help="Contact whose events to erase (with --inbox).")
@click.option("--inbox", help="Inbox of --contact.")
@pass_app
def delete(
    app: AppContext,
    user: str | None,
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


_OPTIONS = {"user_id": "--user", "session_id": "--session", "contact_id": "--contact",
            "inbox_id": "--inbox"}  # fmt: skip


def _scope(user: str | None, session: str | None, contact: str | None, inbox: str | None) -> Scope:
    try:
        if user is not None and contact is None and inbox is None:
            return Scope.session(user, session) if session is not None else Scope.user(user)
        if contact is not None and inbox is not None and user is None and session is None:
            return Scope.contact(contact, inbox)
    except ValidationError as err:
        problem = err.errors(include_url=False)[0]
        option = _OPTIONS.get(str(problem["loc"][0]) if problem["loc"] else "", "the scope")
        message = str(problem["msg"]).removeprefix("Value error, ")
        raise click.BadParameter(message, param_hint=option) from None
    raise click.UsageError("Give --user [--session], or --contact with --inbox.")
