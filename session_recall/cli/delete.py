"""`session-recall delete`: erase a user, a session of a user, a contact in an inbox
of a user, or one event of a user."""

import click
from pydantic import ValidationError

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.indexer import Scope, erase, preview_erasure


@click.command()
@click.option("--user", required=True, help="User whose events to erase.")
@click.option("--session", help="Only this session of --user.")
@click.option("--contact", help="Only this contact of --user (with --inbox).")
@click.option("--inbox", help="Inbox of --contact.")
@click.option("--event", help="Only the event of this id of --user (every copy of it).")
@click.option(
    "--dry-run", is_flag=True, help="Print how many events would go; change nothing (no tombstone)."
)
@pass_app
def delete(
    app: AppContext,
    user: str,
    session: str | None,
    contact: str | None,
    inbox: str | None,
    event: str | None,
    dry_run: bool,
) -> None:
    """Remove every event of a scope. Every stored one goes, whatever its timestamp,
    and a tombstone is kept: late retries and replays of what was erased are refused,
    while the scope's new events (stamped after the erasure) are stored. Prints the
    number of events removed, and of those kept, with why: stored while the erasure
    ran, stamped after it, they are new.

    The tombstone stays even when nothing was removed (a mistyped id, say): check
    first with --dry-run, which changes nothing.

    \b
    Examples:
      session-recall delete --user alice --session s-42 --dry-run
      session-recall delete --user acme --contact c-42 --inbox web
      session-recall delete --user alice --event e-7
    """
    scope = _scope(user, session, contact, inbox, event)
    if dry_run:
        preview = preview_erasure(app.client, app.settings.index, scope)
        click.echo(
            f"Would remove {_counted(preview.events, scope)} of {scope.describe()}; "
            "nothing was changed (dry run)."
        )
        return
    result = erase(app.client, app.settings.index, scope)
    click.echo(f"Removed {_counted(result.removed, scope)} of {scope.describe()}.")
    if result.kept:
        click.echo(f"Kept {_counted(result.kept, scope)}: {result.kept_because}")


def _counted(count: int, scope: Scope) -> str:
    """ "2 events" of a scope; of one event's scope, "2 copies": its id stamped at two
    instants (not "2 events of event 'e1'")."""
    one, many = ("copy", "copies") if scope.kind == "event" else ("event", "events")
    return f"{count} {one if count == 1 else many}"


_OPTIONS = {"user_id": "--user", "session_id": "--session", "contact_id": "--contact",
            "inbox_id": "--inbox", "event_id": "--event"}  # fmt: skip


def _scope(
    user: str, session: str | None, contact: str | None, inbox: str | None, event: str | None
) -> Scope:
    try:
        # Each shape on its own branch: --event beside --contact and --inbox is refused,
        # never read as the contact's scope, which would erase all its events.
        if event is not None:
            if session is None and contact is None and inbox is None:
                return Scope.event(user, event)
        elif contact is not None and inbox is not None:
            if session is None:
                return Scope.contact(user, contact, inbox)
        elif contact is None and inbox is None:
            return Scope.session(user, session) if session is not None else Scope.user(user)
    except ValidationError as err:
        problem = err.errors(include_url=False)[0]
        option = _OPTIONS.get(str(problem["loc"][0]) if problem["loc"] else "", "the scope")
        message = str(problem["msg"]).removeprefix("Value error, ")
        raise click.BadParameter(message, param_hint=option) from None
    raise click.UsageError(
        "Give --user alone, with --session, with --event, or with --contact and --inbox."
    )
