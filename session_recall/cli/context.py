"""What every command shares: the settings from flags and environment, the client,
and the translation of project errors into click's exit codes (1 failure, 2 usage)."""

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click
from elasticsearch import Elasticsearch

from session_recall.client import check_server, make_client
from session_recall.config import Settings
from session_recall.core.errors import SessionRecallError

F = TypeVar("F", bound=Callable[..., Any])


class AppContext:
    """Holds the settings; the client is made on first use, after the version check."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._client: Elasticsearch | None = None

    @property
    def client(self) -> Elasticsearch:
        if self._client is None:
            client = make_client(self.settings)
            check_server(client)
            self._client = client
        return self._client


pass_app = click.make_pass_decorator(AppContext)


def reports_errors(func: F) -> F:
    """Turn a `SessionRecallError` into a one-line message and exit code 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except SessionRecallError as err:
            raise click.ClickException(str(err)) from None

    return wrapper  # type: ignore[return-value]
