"""`session-recall consolidate`: mine users' new events into kept memories."""

import signal
import sys
import threading

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.factories import embedder_for, miner_for
from session_recall.indexer.enrichment.consolidation import (
    ConsolidationSummary,
    Consolidator,
    follow,
)
from session_recall.indexer.enrichment.leases import Leased


@click.command("consolidate")
@click.option("--user", help="The user whose new events are mined.")
@click.option("--all-users", is_flag=True, help="Mine the new events of every user.")
@click.option(
    "--follow", "keep_following", is_flag=True,
    help="Keep mining every user's new events as they are stored (implies --all-users); "
    "Ctrl-C or SIGTERM stops.",
)  # fmt: skip
@click.option(
    "--poll", type=click.FloatRange(min=0.1), default=5.0, show_default=True,
    help="With --follow: seconds between two passes.",
)  # fmt: skip
@pass_app
def consolidate(
    app: AppContext, user: str | None, all_users: bool, keep_following: bool, poll: float
) -> None:
    """Mine users' new events into kept memories (with no model, by default).

    Reads the events stored since the user's last pass (a checkpoint kept in
    Elasticsearch per user), finds decisions, corrections, explicit requests ("please
    remember ...") and preferences with the built-in English miner, and keeps each as
    a memory naming its source events; a newer one on the same subject supersedes the
    older, which stays as history. A second pass with nothing new adds nothing.
    Several consolidators on one alias share the work by leases.

    With SESSION_RECALL_MINER=model (and SESSION_RECALL_MINER_URL, _MODEL), the user's
    turns go to a chat-completions endpoint with JSON-schema output instead, with the
    user's nearest current memories; what it returns is checked before it is written.
    When the model fails, the turns wait for the next pass and the exit code is 1.

    \b
    Examples:
      session-recall consolidate --user alice
      session-recall consolidate --all-users
      session-recall consolidate --follow
    """
    if user is not None and (all_users or keep_following):
        raise click.UsageError("Give --user, or --all-users (or --follow), not both.")
    if user is None and not (all_users or keep_following):
        raise click.UsageError("Give --user U, or --all-users, or --follow.")
    client, alias = app.client, app.settings.index
    stop = threading.Event()
    embedder = embedder_for(app.settings)
    consolidator = Consolidator(
        client,
        alias,
        embedder=embedder,
        leases=Leased(client, alias, work="consolidation"),
        stop=stop,
        miner=miner_for(app.settings, client, embedder=embedder),
    )
    if keep_following:
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        click.echo("Mining new events as they are stored; Ctrl-C stops.", err=True)
        try:
            follow(consolidator, stop=stop, poll_seconds=poll, on_pass=_report)
        except KeyboardInterrupt:
            stop.set()
        click.echo("Stopped.", err=True)
        return
    try:
        summary = consolidator.run(user_id=user)
    finally:
        consolidator.leave()
    click.echo(summary.line())
    if summary.model_failed:
        # A scheduled pass shows as failed; what it saved stays saved.
        sys.exit(1)


def _report(summary: ConsolidationSummary) -> None:
    if summary.events or summary.model_failed:
        click.echo(summary.line(), err=True)
