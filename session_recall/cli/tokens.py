"""`session-recall tokens issue`: a token for `serve`, bound to one user."""

import os
import re
import tempfile
from pathlib import Path

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.security.tokens import MAX_TTL_S, Action, audience_for, issue

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"([1-9][0-9]{0,6})([smhd])")


def _actions(_ctx: click.Context, _param: click.Parameter, value: str) -> frozenset[Action]:
    words = [word.strip() for word in value.split(",") if word.strip()]
    unknown = sorted({word for word in words if word not in {a.value for a in Action}})
    if unknown or not words:
        raise click.BadParameter(
            f"{', '.join(map(repr, unknown)) or 'nothing'} is not one of read, write, erase; "
            "give some of them, comma-separated (e.g. read,write)."
        )
    return frozenset(Action(word) for word in words)


def _seconds(_ctx: click.Context, _param: click.Parameter, value: str) -> int:
    found = _DURATION.fullmatch(value.strip())
    seconds = int(found[1]) * _UNITS[found[2]] if found else 0
    if not 0 < seconds <= MAX_TTL_S:
        raise click.BadParameter(
            f"{value!r} is not a duration from 1s to {MAX_TTL_S // 86400}d; "
            "give a number and a unit, s, m, h or d (e.g. 90s, 30m, 1h, 7d)."
        )
    return seconds


@click.group()
def tokens() -> None:
    """Tokens for serve, each bound to one user (or one ADK app and user) and to what it
    may do there."""


@tokens.command("issue")
@click.option(
    "--user", required=True, help="The user the token reaches (with --app: ADK's user_id)."
)
@click.option(
    "--app",
    "app_name",
    metavar="APP",
    help="An ADK app_name: the token reaches the memory of --user in this app, and nothing else.",
)
@click.option(
    "--can",
    "actions",
    required=True,
    callback=_actions,
    metavar="ACTIONS",
    help="What it may do, comma-separated: read (the recall tools and reads), write "
    "(POST /v1/events), erase (the DELETE endpoints).",
)
@click.option(
    "--ttl",
    default="1h",
    show_default=True,
    callback=_seconds,
    metavar="DURATION",
    help="How long it is valid: 90s, 30m, 1h, 7d; at most 30d (a token cannot be revoked "
    "alone, only with every other, by a new key).",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write the token to FILE, readable by its owner alone (mode 600), rather than print it.",
)
@pass_app
def issue_command(
    app: AppContext,
    user: str,
    app_name: str | None,
    actions: frozenset[Action],
    ttl: int,
    output: Path | None,
) -> None:
    """Issue a token that serve takes for one user, signed with serve's token key:
    SESSION_RECALL_TOKEN_KEY, else the key kept in the home folder (made here on first
    use; from then on, a serve with this home requires a token on every request).
    Tokens are for the alias of --index alone. The token is printed on stdout, or
    written to --output; it is never logged. A client sends it as `Authorization:
    Bearer <token>`.

    \b
    Example:
      session-recall tokens issue --user alice --can read,write --ttl 1h --output alice.token
    """
    settings = app.settings
    new_key = settings.token_key is None and not settings.token_key_file.exists()
    key = settings.token_signing_key(create=True)
    assert key is not None  # made when missing
    token = issue(
        key,
        audience=audience_for(settings.index),
        user=user,
        app=app_name,
        actions=actions,
        ttl_s=ttl,
    )
    if new_key:
        click.echo(
            f"Made serve's token key, {settings.token_key_file} (mode 600): a serve with this "
            "home now requires a token on every request.",
            err=True,
        )
    if output is None:
        click.echo(token)
    else:
        try:
            _write_private(output, token + "\n")
        except OSError as err:
            raise click.FileError(str(output), hint=err.strerror or str(err)) from None


def _write_private(path: Path, text: str) -> None:
    """`text` into `path`, readable by its owner alone, whole or not at all: written
    beside it (mkstemp makes the file 0600) and renamed over it."""
    handle, draft = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(draft, path)
    except BaseException:
        Path(draft).unlink(missing_ok=True)
        raise
