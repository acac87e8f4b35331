"""`sessions`, `show` and `show-event`: the basic reads, without a keyword.

`sessions` lists a user's sessions with their first and last instant and number of
events; `show` prints one session's events, oldest first, whole; both page in the
engine. `show-event` prints an event whole by its id: what a tool's bounded answer cut
(its `eventId`).
"""

import shlex

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.cli.search import Paging, fetch, paging_options, run_page
from session_recall.recall import DEFAULT_PAGE_SIZE, RecallPage, Searchers, SessionsPage


@click.command("sessions")
@click.option("--user", required=True, help="The user whose sessions are listed.")
@click.option("--cursor", help="The next page: a page's next_cursor (or the `More:` line's).")
@click.option(
    "--page-size", type=int, show_default=str(DEFAULT_PAGE_SIZE), help="Sessions per page."
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text: a line per session; json: the typed page with next_cursor.",
)  # fmt: skip
@click.option(
    "--show-query", is_flag=True, help="Print the Elasticsearch request instead of running it."
)
@pass_app
def sessions(
    app: AppContext,
    user: str,
    cursor: str | None,
    page_size: int | None,
    fmt: str,
    show_query: bool,
) -> None:
    """List a user's sessions, in session id order, with their first and last instant
    and number of events.

    \b
    Example:
      session-recall sessions --user alice --page-size 50
    """

    def run(searchers: Searchers) -> SessionsPage:
        return searchers.sessions(user_id=user, page_size=page_size).list(cursor=cursor)

    page = fetch(app, run, show_query=show_query)
    if page is None:
        return
    if fmt == "json":
        click.echo(page.model_dump_json(indent=2))
        return
    if not page.items:
        click.echo(f"No sessions of user {user!r}" + (f" after {cursor!r}." if cursor else "."))
        return
    click.echo("session\tfirst\tlast\tevents")
    for item in page.items:
        first, last = item.first.isoformat(), item.last.isoformat()
        click.echo(f"{item.session_id}\t{first}\t{last}\t{item.events}")
    if page.next_cursor is not None:
        more = f"--user {shlex.quote(user)} --cursor {shlex.quote(page.next_cursor)}"
        click.echo(f"More: session-recall sessions {more}", err=True)


@click.command("show")
@click.option("--user", required=True, help="The user the session belongs to.")
@click.option("--session", required=True, help="The session shown.")
@paging_options
@pass_app
def show(app: AppContext, user: str, session: str, paging: Paging) -> None:
    """Print every event of one session, oldest first, a page at a time.

    \b
    Example:
      session-recall show --user alice --session s-trip --page-size 100
    """

    def run(searchers: Searchers) -> RecallPage:
        searcher = searchers.conversation(
            user_id=user, session_id=session, page_size=paging.page_size
        )
        return searcher.read(page=paging.page, cursor=paging.cursor)

    run_page(app, paging, run, with_session=False, whole=True)


@click.command("show-event")
@click.option("--user", required=True, help="The user the event belongs to.")
@click.option(
    "--show-query", is_flag=True, help="Print the Elasticsearch request instead of running it."
)
@click.argument("event_id")
@pass_app
def show_event(app: AppContext, user: str, show_query: bool, event_id: str) -> None:
    """Print a user's event whole (text and payload) by its id, as JSON.

    A tool's answer cuts long texts and names their eventId: this gives one whole.

    \b
    Example:
      session-recall show-event --user alice e-1042
    """

    def run(searchers: Searchers) -> RecallPage:
        return searchers.events(user_id=user).read(event_id)

    page = fetch(app, run, show_query=show_query)
    if page is None:
        return
    if not page.items:
        raise click.ClickException(
            f"User {user!r} has no event {event_id!r}: check the id (a tool's answer names "
            "it as eventId) and the user."
        )
    click.echo(page.model_dump_json(indent=2))
