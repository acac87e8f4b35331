"""What every command shares: the settings from flags and environment, and the client."""

import shlex

import click
from elasticsearch import Elasticsearch

from session_recall.client import check_server, make_client
from session_recall.config import Settings


class AppContext:
    """Holds the settings; the client is made on first use, after the version check.
    `named` are the options of the group given on the command line (`--index X`,
    `--home H`), which a command line printed as a next step repeats (`command`)."""

    def __init__(self, settings: Settings, named: tuple[str, ...] = ()) -> None:
        self.settings = settings
        self.named = named
        self._client: Elasticsearch | None = None

    def command(self, *words: str, **options: str | None) -> str:
        """A command line to print as a next step: `session-recall`, the options the
        user named, `words`, and each of `options` (`node="nc"`: `--node nc`) that is
        set and not "default"."""
        given = [
            f"--{key.replace('_', '-')} {shlex.quote(value)}"
            for key, value in options.items()
            if value and value != "default"
        ]
        return " ".join(["session-recall", *self.named, *words, *given])

    @property
    def client(self) -> Elasticsearch:
        if self._client is None:
            client = make_client(self.settings)
            check_server(client)
            self._client = client
        return self._client


pass_app = click.make_pass_decorator(AppContext)
