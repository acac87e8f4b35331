"""What every command shares: the settings from flags and environment, and the client."""

import click
from elasticsearch import Elasticsearch

from session_recall.client import check_server, make_client
from session_recall.config import Settings


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
