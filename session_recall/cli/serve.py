"""`session-recall serve`: the HTTP sidecar."""

import ipaddress
import logging
import logging.config
import sys
from pathlib import Path
from typing import Any

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.cli.observe import log_format_option, metrics_for
from session_recall.cli.options import build, flag, limit_options
from session_recall.cli.secret_options import secret_options
from session_recall.config import read_secret
from session_recall.http.limits import ServeLimits
from session_recall.indexer import REFRESH_POLICIES, Refresh
from session_recall.observability.logs import LogFormat


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
    what="operator's bearer token",
    help="The operator's bearer token, which reaches every user with every action",
)
@click.option(
    "--idp-jwks-url",
    envvar="SESSION_RECALL_IDP_JWKS_URL",
    show_envvar=True,
    metavar="URL",
    help="An identity provider's key set (JWKS): serve takes the tokens it signs, too. "
    "Needs --idp-issuer and --idp-audience.",
)
@click.option(
    "--idp-issuer",
    envvar="SESSION_RECALL_IDP_ISSUER",
    show_envvar=True,
    metavar="ISSUER",
    help="The `iss` the identity provider's tokens must carry.",
)
@click.option(
    "--idp-audience",
    envvar="SESSION_RECALL_IDP_AUDIENCE",
    show_envvar=True,
    metavar="AUDIENCE",
    help="The `aud` its tokens must name for this serve.",
)
@click.option(
    "--idp-user-claim",
    envvar="SESSION_RECALL_IDP_USER_CLAIM",
    show_envvar=True,
    metavar="CLAIM",
    help="The claim of its tokens that holds the user.  [default: sub]",
)
@click.option(
    "--idp-app-claim",
    envvar="SESSION_RECALL_IDP_APP_CLAIM",
    show_envvar=True,
    metavar="CLAIM",
    help="The claim of its tokens that holds an ADK app; a token with it reaches that app's "
    "user alone.",
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
@click.option(
    "--consolidate/--no-consolidate", default=False, show_default=True,
    envvar="SESSION_RECALL_CONSOLIDATE",
    help="Mine users' new events into kept memories in the background, as `session-recall "
    "consolidate --follow` does (replicas share the work). Off unless the deployment "
    "chooses a persistent memory.",
)  # fmt: skip
@click.option(
    "--metrics/--no-metrics", default=True, show_default=True, envvar="SESSION_RECALL_METRICS",
    help="Keep Prometheus metrics and serve them at GET /metrics.",
)  # fmt: skip
@click.option(
    "--protect-metrics", is_flag=True, envvar="SESSION_RECALL_PROTECT_METRICS",
    help="/metrics takes the operator token, like every other path; by default it is open "
    "like /readyz.",
)  # fmt: skip
@log_format_option
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
    consolidate: bool,
    idp_jwks_url: str | None,
    idp_issuer: str | None,
    idp_audience: str | None,
    idp_user_claim: str | None,
    idp_app_claim: str | None,
    metrics: bool,
    protect_metrics: bool,
    log_format: LogFormat,
    **limits: Any,
) -> None:
    """Serve the HTTP API: POST /v1/events, the DELETE erasure endpoints, the recall
    endpoints, /healthz, /readyz, and its description at /openapi.json. Bound to
    127.0.0.1 unless told otherwise; starts even when Elasticsearch is down (/readyz
    says so). Every answer comes within a deadline, and what clients may hold
    (connections, bodies, events) is bounded: see the options below.

    Callers show a token: the operator's (SESSION_RECALL_TOKEN, every user), or one
    bound to one user, from `session-recall tokens issue` or an identity provider
    (--idp-*). With none configured, every caller reaches every user: serve says so.

    Prometheus metrics at GET /metrics; every answer carries an X-Request-Id, which
    --log-format json writes on each log line; with the otel extra and
    OTEL_EXPORTER_OTLP_ENDPOINT set, a trace span per request.

    \b
    Example:
      SESSION_RECALL_TOKEN=... session-recall serve --port 8080
    """
    from session_recall.http import create_app
    from session_recall.http.auth import user_tokens
    from session_recall.http.server import log_config, run
    from session_recall.observability import tracing
    from session_recall.tools import TOOLS

    if token_file is not None:
        token = _token_from(token_file, given=token)
    bounds = build(ServeLimits, {name: (flag(name), value) for name, value in limits.items()})

    settings = app.settings.with_overrides(
        idp_jwks_url=idp_jwks_url,
        idp_issuer=idp_issuer,
        idp_audience=idp_audience,
        idp_user_claim=idp_user_claim,
        idp_app_claim=idp_app_claim,
    )
    tokens = user_tokens(settings)
    if log_format == "json":  # from the first line on: what is said before uvicorn starts too
        logging.config.dictConfig(log_config(bounds.log_limit, log_level, log_format="json"))
    if not token and tokens is None:
        who = "every local process" if _is_loopback(host) else f"anyone who can reach {host}"
        _warn(
            f"serving without any token: {who} can read, write and erase every user's "
            "events. Set SESSION_RECALL_TOKEN, or issue tokens bound to one user with "
            "`session-recall tokens issue`.",
            log_format,
        )
    web = create_app(
        settings,
        token=token or None,
        tokens=tokens,
        refresh=refresh,
        limits=bounds,
        enrich=enrich,
        consolidate=consolidate,
        metrics=metrics_for(settings, tools=TOOLS) if metrics else None,
        protect_metrics=protect_metrics,
        tracer=tracing.configure(),
    )
    run(web, host=host, port=port, limits=bounds, log_level=log_level, log_format=log_format)


def _warn(message: str, log_format: LogFormat) -> None:
    """A warning at start: a log line in JSON, else a line on stderr as click writes."""
    if log_format == "json":
        logging.getLogger(__name__).warning(message)
    else:
        click.echo(f"Warning: {message}", err=True)


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
