"""`session-recall serve`: the HTTP sidecar."""

import ipaddress
import sys
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from session_recall.cli.context import AppContext, pass_app
from session_recall.cli.options import limit_options
from session_recall.cli.secret_options import secret_options
from session_recall.config import read_secret
from session_recall.http.limits import ServeLimits
from session_recall.indexer import REFRESH_POLICIES, Refresh


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    envvar="SESSION_RECALL_HOST",
    show_envvar=True,
    help="Address to bind.",
)
@click.option(
    "--port",
    default=8080,
    show_default=True,
    type=click.IntRange(0, 65535),
    envvar="SESSION_RECALL_PORT",
    show_envvar=True,
    help="Port to bind.",
)
@secret_options(
    "token",
    envvar="SESSION_RECALL_TOKEN",
    what="bearer token",
    help="Bearer token required on every request but the probes",
)
@click.option(
    "--refresh", type=click.Choice(REFRESH_POLICIES), default="false", show_default=True,
    envvar="SESSION_RECALL_REFRESH",
    help="When POST /v1/events answers by default: once stored (false; searchable within "
    "1 s), or once searchable (wait_for). A request's ?refresh= overrides it.",
)  # fmt: skip
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["debug", "info", "warning", "error"]),
    help="The least severe log lines written to stderr (the server's and the app's).",
)
@click.option(
    "--enrich/--no-enrich", default=True, show_default=True, envvar="SESSION_RECALL_ENRICH",
    help="Enrich stored events in the background (stems, context, vectors); /readyz "
    "reports the lag. With --no-enrich, run `session-recall embed --follow` elsewhere.",
)  # fmt: skip
@limit_options()
@pass_app
def serve(
    app: AppContext,
    host: str,
    port: int,
    token: str | None,
    token_file: Path | None,
    refresh: Refresh,
    log_level: str,
    enrich: bool,
    **limits: Any,
) -> None:
    """Serve the HTTP API: POST /v1/events, the DELETE erasure endpoints, the recall
    endpoints, /healthz, /readyz, and its description at /openapi.json. Bound to
    127.0.0.1 unless told otherwise; starts even when Elasticsearch is down (/readyz
    says so). Every answer comes within a deadline, and what clients may hold
    (connections, bodies, events) is bounded: see the options below.

    \b
    Example:
      SESSION_RECALL_TOKEN=... session-recall serve --port 8080
    """
    from session_recall.http import create_app
    from session_recall.http.server import run

    if token_file is not None:
        token = _token_from(token_file, given=token)
    try:
        bounds = ServeLimits(**limits)
    except ValidationError as err:
        raise click.UsageError(str(err.errors()[0]["msg"])) from None

    if not token and not _is_loopback(host):
        click.echo(
            f"Warning: serving on {host} without a token; anyone who can reach it can "
            "write and erase events. Set SESSION_RECALL_TOKEN.",
            err=True,
        )
    web = create_app(
        app.settings, token=token or None, refresh=refresh, limits=bounds, enrich=enrich
    )
    run(web, host=host, port=port, limits=bounds, log_level=log_level)


def _token_from(path: Path, *, given: str | None) -> str:
    if given:
        raise click.UsageError(
            "Give the token once: --token (SESSION_RECALL_TOKEN) or --token-file."
        )
    if str(path) == "-":
        return sys.stdin.readline().strip()
    return read_secret("--token-file (SESSION_RECALL_TOKEN_FILE)", path)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
