"""The `session-recall` command: one click group, a module per command family."""

from pathlib import Path

import click
from pydantic import ValidationError

from session_recall import __version__
from session_recall.cli.agent_tools import mcp, tools
from session_recall.cli.context import AppContext
from session_recall.cli.delete import delete
from session_recall.cli.embed import embed
from session_recall.cli.group import RecallGroup
from session_recall.cli.ingest import ingest_command
from session_recall.cli.memory import memory_search
from session_recall.cli.node import node
from session_recall.cli.partitions import migrate, partitions, prune
from session_recall.cli.reads import sessions, show
from session_recall.cli.search import search, search_conversations, search_session
from session_recall.cli.serve import serve
from session_recall.cli.setup import setup
from session_recall.config import Settings, settings_problem
from session_recall.core.errors import ConfigurationError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(cls=RecallGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="session-recall")
@click.option(
    "--es-url",
    envvar="ELASTICSEARCH_URL",
    show_envvar=True,
    help="Elasticsearch URL, e.g. http://127.0.0.1:9200.",
)
@click.option(
    "--api-key", envvar="ELASTICSEARCH_API_KEY", show_envvar=True, help="API key (never printed)."
)
@click.option(
    "--username", envvar="ELASTICSEARCH_USERNAME", show_envvar=True, help="Basic-auth user."
)
@click.option(
    "--password",
    envvar="ELASTICSEARCH_PASSWORD",
    show_envvar=True,
    help="Basic-auth password (never printed).",
)
@click.option(
    "--ca-certs",
    envvar="ELASTICSEARCH_CA_CERTS",
    show_envvar=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="CA certificate bundle for HTTPS.",
)
@click.option(
    "--index",
    envvar="SESSION_RECALL_INDEX",
    show_envvar=True,
    help="Alias to read and write.  [default: session-events]",
)
@click.option(
    "--home", envvar="SESSION_RECALL_HOME", show_envvar=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for local state.  [default: ~/.cache/session-recall]",
)  # fmt: skip
@click.pass_context
def main(
    ctx: click.Context,
    es_url: str | None,
    api_key: str | None,
    username: str | None,
    password: str | None,
    ca_certs: Path | None,
    index: str | None,
    home: Path | None,
) -> None:
    """Searchable, user-isolated memory of AI agent sessions, in Elasticsearch.

    Each option below can also come from the environment variable its help names, and
    goes before the command: `session-recall --index my-events search ...`.

    \b
    Exit codes:
      0  success
      1  ingest: some events went to the dead-letter file; a search: a shard is
         missing, run it again soon (`node status`: not running)
      2  usage: a wrong option, argument or query; change the command
      3  Elasticsearch unavailable or not set up, or the configuration is wrong
    \b
    Example:
      session-recall node start && session-recall setup
    """
    values = {
        "ELASTICSEARCH_URL": es_url, "ELASTICSEARCH_API_KEY": api_key,
        "ELASTICSEARCH_USERNAME": username, "ELASTICSEARCH_PASSWORD": password,
        "ELASTICSEARCH_CA_CERTS": ca_certs, "SESSION_RECALL_INDEX": index,
        "SESSION_RECALL_HOME": home,
    }  # fmt: skip
    try:
        settings = Settings.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as err:
        # Named by its variable, and told as every configuration error is (exit 3).
        raise ConfigurationError(settings_problem(err)) from None
    ctx.obj = AppContext(settings)


main.add_command(node)
main.add_command(setup)
main.add_command(partitions)
main.add_command(prune)
main.add_command(migrate)
main.add_command(ingest_command, name="ingest")
main.add_command(serve)
main.add_command(delete)
main.add_command(search)
main.add_command(search_session)
main.add_command(search_conversations)
main.add_command(memory_search)
main.add_command(embed)
main.add_command(sessions)
main.add_command(show)
main.add_command(tools)
main.add_command(mcp)

__all__ = ["main"]
