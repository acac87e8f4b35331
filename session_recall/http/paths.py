"""Ids in request paths: each segment percent-decoded on its own, so an id may hold any
character, `/` included (ADK's `tea-shop/ana` is `/v1/users/tea-shop%2Fana`).

ASGI servers decode the whole path before routing, `%2F` into `/`, so
`DELETE /v1/users/bob%2Fsessions%2Fs1` would reach the session route as user "bob",
session "s1": another scope than the one named. `PathIds` routes on the segments of
the raw path instead: it decodes each one strictly (UTF-8; `%FF` is refused, where the
server would read it as U+FFFD, the same user as `%FE`), and hands the router a path in
which only `%` and `/` stay encoded, inside their segment. Every route with an id in
its path takes it with the `id` convertor (`route()` puts it there), which decodes
those two: the route sees the id exactly as the client encoded it.
"""

import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote, unquote, unquote_to_bytes

from starlette.convertors import Convertor, register_url_convertor
from starlette.routing import Route, compile_path
from starlette.types import ASGIApp, Receive, Scope, Send

from session_recall.http.errors import json_error

ID = "id"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class _IdConvertor(Convertor[str]):
    """One path segment, as `PathIds` left it: `%25` and `%2F` decoded, nothing else."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return unquote(value)

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


register_url_convertor(ID, _IdConvertor())


def route(path: str, endpoint: Callable[..., Any], methods: Sequence[str]) -> Route:
    """A route whose `{placeholders}` are ids. Its `path` stays as the OpenAPI document
    writes it (`/v1/users/{user}`), which what is keyed by route (the token checks'
    needs) uses; only the matching takes the `id` convertor."""
    made = Route(path, endpoint, methods=list(methods))
    made.path_regex, made.path_format, made.param_convertors = compile_path(
        _PLACEHOLDER.sub(rf"{{\1:{ID}}}", path)
    )
    return made


def _segment(raw: bytes) -> str:
    """A raw path segment decoded, then `%` and `/` encoded again (UnicodeDecodeError
    when its bytes are not UTF-8)."""
    text = unquote_to_bytes(raw).decode("utf-8")
    return text.replace("%", "%25").replace("/", "%2F")


class PathIds:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        raw = scope.get("raw_path")
        try:
            if raw is None:  # a server that keeps no raw path: its `/` are all separators
                path = scope["path"].replace("%", "%25")
            else:
                path = "/".join(_segment(part) for part in raw.split(b"/"))
        except UnicodeDecodeError:
            response = json_error(
                400,
                "A segment of the path is not UTF-8 once percent-decoded (%FF, say).",
                "Percent-encode ids as UTF-8 bytes: 'é' is %C3%A9.",
            )
            await response(scope, receive, send)
            return
        await self._app({**scope, "path": path}, receive, send)
