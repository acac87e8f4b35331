"""`session-recall partitions`, `prune`, `compact` and `migrate`: see the partitions
behind the alias, delete or merge whole partitions of periods that ended, and move an
index of the single-index layout into partitions."""

import sys
from datetime import date

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.cli.options import page_size_option
from session_recall.core.instant import Instant, InvalidInstant
from session_recall.indexer import compaction
from session_recall.indexer.layout import (
    StoredIndex,
    ending_before,
    prune_partitions,
    require_alias,
)
from session_recall.indexer.layout import stored_indices as list_stored
from session_recall.indexer.migration import DEFAULT_PAGE, MoveSummary, move, plan


@click.command()
@pass_app
def partitions(app: AppContext) -> None:
    """List each index behind the alias: the period it covers (UTC, end excluded), its
    event count and its size on disk. Indices of the single-index layout show no period.

    \b
    Example:
      session-recall partitions
    """
    require_alias(app.client, app.settings.index)
    stored = list_stored(app.client, app.settings.index)
    click.echo(_row("index", "from", "until", "events", "size"))
    for item in stored:
        click.echo(_line(item))


@click.command()
@click.option(
    "--before",
    required=True,
    metavar="DATE",
    help="Delete the partitions that end at or before DATE (2026-01-01, or an instant).",
)
@click.option("--yes", is_flag=True, help="Delete them; without it, only list them.")
@pass_app
def prune(app: AppContext, before: str, yes: bool) -> None:
    """Delete whole partitions whose period ends at or before DATE. Without --yes,
    lists what would go and changes nothing. Indices of the single-index layout are
    never deleted.

    \b
    Example:
      session-recall prune --before 2025-01-01          # what would go
      session-recall prune --before 2025-01-01 --yes    # delete it
    """
    cutoff = _instant(before)
    require_alias(app.client, app.settings.index)
    doomed = ending_before(list_stored(app.client, app.settings.index), cutoff)
    events = sum(item.docs for item in doomed)
    for item in doomed:
        click.echo(_line(item))
    if not yes:
        click.echo(
            f"Would delete {len(doomed)} partition(s), {events} event(s); nothing was "
            "changed. Run again with --yes to delete them."
        )
        return
    prune_partitions(app.client, app.settings.index, doomed, cutoff)
    click.echo(f"Deleted {len(doomed)} partition(s), {events} event(s).")


@click.command()
@click.option(
    "--before",
    metavar="DATE",
    help="Merge the partitions that end at or before DATE (2026-01-01, or an instant; "
    "default: now, every period that ended).",
)
@click.option("--dry-run", is_flag=True, help="Only list what would be merged.")
@pass_app
def compact(app: AppContext, before: str | None, dry_run: bool) -> None:
    """Merge each partition of a period that ended into one segment, so that
    memory_search, which visits every partition, searches one segment in each rather
    than several. Run it once a period ends (a monthly timer), and after loading old
    events. Partitions in one segment already are left alone; searches and writes go on
    meanwhile.

    \b
    Example:
      session-recall compact --dry-run
      session-recall compact
    """
    client, alias = app.client, app.settings.index
    cutoff = Instant.now() if before is None else _instant(before)
    require_alias(client, alias)
    planned = compaction.plan(client, alias, before=cutoff)
    already = f"{planned.compact_already} already in one segment"
    if not planned.to_merge:
        click.echo(f"Nothing to merge: {already}.")
        return
    if dry_run:
        for index in planned.to_merge:
            events, segments = planned.events[index], planned.segments[index]
            click.echo(f"{index}: {events} event(s), {segments} segments")
        click.echo(
            f"Would merge {len(planned.to_merge)} partition(s) ({already}); nothing was "
            "changed. Run again without --dry-run to merge them."
        )
        return
    merged = compaction.compact(client, planned, on_merged=_merged)
    click.echo(f"Merged {len(merged)} partition(s) into one segment each ({already}).")


def _merged(merged: compaction.Compaction) -> None:
    click.echo(merged.line())


@click.command()
@click.option("--yes", is_flag=True, help="Move them; without it, only say what would move.")
@page_size_option(DEFAULT_PAGE, "Events read and written per request.")
@pass_app
def migrate(app: AppContext, yes: bool, page_size: int) -> None:
    """Move the events of an index of the single-index layout (ALIAS-000001, made by
    an earlier release) into the partitions of their periods, then delete it. Without
    --yes, lists what would move and changes nothing. Run `setup` first.

    Events already in their partition are kept as they are, events of erased scopes
    are dropped, vectors are kept. The old index is deleted only once all its events
    are in partitions: after an interruption or an error, run it again. Exit 1 when
    an index was kept.

    \b
    Example:
      session-recall migrate          # what would move
      session-recall migrate --yes    # move it
    """
    client, alias = app.client, app.settings.index
    plans = plan(client, alias)
    if not plans:
        click.echo(f"Nothing to move: every index behind {alias!r} is a partition.")
        return
    for item in plans:
        into = ", ".join(f"{index} ({count})" for index, count in item.partitions.items())
        click.echo(f"{item.index}: {item.events} event(s) into {into or 'no partition'}")
    if not yes:
        events = sum(item.events for item in plans)
        click.echo(
            f"Would move {events} event(s) from {len(plans)} index(es); nothing was changed. "
            "Run again with --yes to move them."
        )
        return
    summaries = move(client, alias, page_size=page_size, on_progress=_report)
    if sys.stderr.isatty():
        click.echo(err=True)  # end the progress line
    for summary in summaries:
        click.echo(summary.line())
    if not all(summary.deleted for summary in summaries):
        sys.exit(1)


def _report(summary: MoveSummary) -> None:
    if sys.stderr.isatty():
        click.echo(f"\r{summary.index}: {summary.done}/{summary.events}", nl=False, err=True)


def _instant(given: str) -> Instant:
    text = given
    try:
        day = date.fromisoformat(given.strip())
    except ValueError:
        pass
    else:
        text = f"{day.isoformat()}T00:00:00Z"  # a day past 2262 is out of range too
    try:
        return Instant.parse(text)
    except InvalidInstant as err:
        raise click.BadParameter(
            f"{given!r} is not a date (2026-01-01) or an instant that can be used: {err}",
            param_hint="--before",
        ) from None


def _row(*cells: str) -> str:
    return "{:<40} {:<20} {:<20} {:>10} {:>12}".format(*cells)


def _line(item: StoredIndex) -> str:
    period = item.partition
    start = "-" if period is None else period.start.isoformat()
    end = "-" if period is None else period.end.isoformat()
    return _row(item.index, start, end, str(item.docs), f"{item.size_bytes:,}")
