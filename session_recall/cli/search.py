"""`search`, `search-session`, `search-conversations`: the recall tools from a shell.

Each prints the tool output by default (what a model would see), the typed page with
`--format json`, or the Elasticsearch request with `--show-query`.
"""

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.cli.query_recorder import QueryRecorder
from session_recall.recall import (
    DEFAULT_LOOKBACK_DAYS,
    DEFAULT_PAGE_SIZE,
    CrossConversationSettings,
    MatchMode,
    RecallPage,
    Searchers,
)
from session_recall.tools import OutputBounds, bounded_page, render_items
from session_recall.tools.searchers import searchers_for

Run = Callable[[Searchers], RecallPage]
T = TypeVar("T")

match_option = click.option(
    "--match", type=click.Choice(["any", "all"]), default="any", show_default=True,
    help="How comma-separated terms combine.",
)  # fmt: skip
_PAGING_OPTIONS = [
    click.option("--page", default=0, show_default=True, help="Zero-indexed page."),
    click.option(
        "--page-size", type=int, show_default=str(DEFAULT_PAGE_SIZE), help="Results per page."
    ),
    click.option("--cursor", help="next_cursor of a previous --format json page."),
    click.option(
        "--format", "fmt", type=click.Choice(["tool", "json"]), default="tool",
        show_default=True,
        help="tool: the tool output a model sees; json: the typed page with next_cursor.",
    ),
    click.option(
        "--show-query", is_flag=True, help="Print the Elasticsearch request instead of running it."
    ),
]  # fmt: skip


@dataclass(frozen=True)
class Paging:
    """What every search command takes besides its scope and query."""

    page: int
    page_size: int | None
    cursor: str | None
    fmt: str
    show_query: bool


def paging_options(func: Callable[..., None]) -> Callable[..., None]:
    """Adds the shared options and hands them to the command as one `paging` argument."""

    @functools.wraps(func)
    def wrapper(*args: Any, page: int, page_size: int | None, cursor: str | None, fmt: str,
                show_query: bool, **kwargs: Any) -> None:  # fmt: skip
        func(*args, paging=Paging(page, page_size, cursor, fmt, show_query), **kwargs)

    for option in reversed(_PAGING_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def fetch(app: AppContext, run: Callable[[Searchers], T], *, show_query: bool) -> T | None:
    """What `run` gets from the searchers; with `show_query`, None, once the requests
    it would send are printed. Errors go to the group, which maps their kind.

    `run` goes first against the recorder, which needs no node: its arguments are
    checked there, so a usage error says so (exit 2) even when the node is down."""
    recorder = QueryRecorder()
    run(searchers_for(recorder, app.settings))  # type: ignore[arg-type]
    if show_query:
        click.echo(json.dumps(recorder.requests, indent=2, ensure_ascii=False))
        return None
    return run(searchers_for(app.client, app.settings))


def run_page(
    app: AppContext, paging: Paging, run: Run, *, with_session: bool, whole: bool = False
) -> None:
    """Fetch one page and print it in the format asked for: a search's texts within the
    tools' bounds, as a model would read them; a read's (`whole`) as they are."""
    page = fetch(app, run, show_query=paging.show_query)
    if page is None:
        return
    if not whole:
        page = bounded_page(page, OutputBounds.of(app.settings))
    if paging.fmt == "json":
        click.echo(page.model_dump_json(indent=2))
    else:
        click.echo(render_items(page.items, with_session=with_session))


@click.command("search")
@click.option("--user", required=True, help="The user whose sessions are searched.")
@match_option
@click.option("--since", help="Only events at or after this instant, e.g. 2026-07-01T00:00:00Z.")
@paging_options
@click.argument("query")
@pass_app
def search(
    app: AppContext,
    user: str,
    match: str,
    since: str | None,
    paging: Paging,
    query: str,
) -> None:
    """cross_session_search: every session of one user.

    QUERY is a keyword or phrase, or up to 20 comma-separated ones.

    \b
    Example:
      session-recall search --user alice --match all "offsite, lisbon"
    """

    def run(searchers: Searchers) -> RecallPage:
        searcher = searchers.cross_session(user_id=user, page_size=paging.page_size)
        return searcher.search(
            query, match=cast(MatchMode, match), since=since, page=paging.page, cursor=paging.cursor
        )

    run_page(app, paging, run, with_session=True)


@click.command("search-session")
@click.option("--user", required=True, help="The user the session belongs to.")
@click.option("--session", required=True, help="The session searched.")
@paging_options
@click.argument("query")
@pass_app
def search_session(
    app: AppContext,
    user: str,
    session: str,
    paging: Paging,
    query: str,
) -> None:
    """conversation_search: one session. QUERY is one keyword or phrase.

    \b
    Example:
      session-recall search-session --user alice --session s-trip lisbon
    """

    def run(searchers: Searchers) -> RecallPage:
        searcher = searchers.conversation(
            user_id=user, session_id=session, page_size=paging.page_size
        )
        return searcher.search(query, page=paging.page, cursor=paging.cursor)

    run_page(app, paging, run, with_session=False)


@click.command("search-conversations")
@click.option(
    "--user",
    required=True,
    help="The user (tenant) the contact belongs to; ids repeat across users.",
)
@click.option("--contact", required=True, help="The contact (end customer).")
@click.option("--inbox", required=True, help="The inbox (channel).")
@click.option("--current-session", help="The conversation the agent is in; always searched.")
@click.option("--lookback-days", type=int, show_default=str(DEFAULT_LOOKBACK_DAYS),
              help="How recent a conversation's last message must be.")  # fmt: skip
@click.option("--enabled/--disabled", default=False, show_default=True,
              help="Disabled searches only --current-session (and says so on stderr).")  # fmt: skip
@match_option
@paging_options
@click.argument("query")
@pass_app
def search_conversations(
    app: AppContext,
    user: str,
    contact: str,
    inbox: str,
    current_session: str | None,
    lookback_days: int | None,
    enabled: bool,
    match: str,
    paging: Paging,
    query: str,
) -> None:
    """Cross-conversation search: a contact's recent conversations in one inbox, of one user.

    \b
    Example:
      session-recall search-conversations --user acme --contact c-42 --inbox web \\
        --current-session conv-102 --enabled "order 7731"
    """
    if not enabled:
        # The tool output stays the model's; the person at the shell is told why.
        if current_session is None:
            raise click.UsageError(
                "Cross-conversation search is disabled (the default) and no "
                "--current-session is given: there is nothing to search. Pass --enabled to "
                "search the contact's recent conversations."
            )
        click.echo(
            "Note: cross-conversation search is disabled (the default): only the current "
            "conversation was searched. Pass --enabled to search the contact's recent "
            "conversations.",
            err=True,
        )

    def run(searchers: Searchers) -> RecallPage:
        settings = CrossConversationSettings.of(enabled=enabled, lookback_days=lookback_days)
        searcher = searchers.cross_conversation(
            user_id=user,
            contact_id=contact,
            inbox_id=inbox,
            settings=settings,
            page_size=paging.page_size,
        )
        return searcher.search(
            query,
            current_session_id=current_session,
            match=cast(MatchMode, match),
            page=paging.page,
            cursor=paging.cursor,
        )

    run_page(app, paging, run, with_session=True)
