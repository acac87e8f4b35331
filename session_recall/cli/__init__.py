"""The `session-recall` command: one click group, a module per command family."""

import importlib
import shlex
import sys
from pathlib import Path
from typing import NamedTuple

import click

from session_recall import __version__
from session_recall.cli.group import RecallGroup
from session_recall.cli.secret_options import secret_options

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class _Command(NamedTuple):
    module: str
    attribute: str
    # The first sentence of its help, as `session-recall --help` lists it: read here
    # so that listing the commands imports none of them (a test holds it to the help).
    summary: str


# Each command is imported when it runs, or when its own --help is asked for, so that
# `--version` and `--help` answer at once (the client and the libraries take a second).
COMMANDS: dict[str, _Command] = {
    "compact": _Command(
        "partitions",
        "compact",
        "Merge each partition of a period that ended into one segment, so that "
        "memory_search, which visits every partition, searches one segment in each rather "
        "than several.",
    ),
    "consolidate": _Command(
        "consolidate",
        "consolidate",
        "Mine users' new events into kept memories (with no model, by default).",
    ),
    "delete": _Command("delete", "delete", "Remove every event of a scope."),
    "embed": _Command(
        "embed",
        "embed",
        "Enrich stored events with stems, context and vectors, for memory_search.",
    ),
    "ingest": _Command(
        "ingest",
        "ingest_command",
        "Store the NDJSON events of FILE (or stdin, with -), one event per line.",
    ),
    "mcp": _Command(
        "agent_tools",
        "mcp",
        "Serve the recall tools (cross_session_search, memory_search, recall_memories) over "
        "stdio to an MCP client, bound to one user.",
    ),
    "memories": _Command(
        "memories",
        "memories",
        "A user's kept memories: search them by relevance, or list them newest first.",
    ),
    "memory-search": _Command(
        "memory",
        "memory_search",
        "memory_search: a user's events that answer QUERY, most relevant first.",
    ),
    "migrate": _Command(
        "partitions",
        "migrate",
        "Move the events of an index of the single-index layout (ALIAS-000001, made by an "
        "earlier release) into the partitions of their periods, then delete it.",
    ),
    "models": _Command(
        "models",
        "models",
        "Local transformer encoders for memory_search (SESSION_RECALL_EMBEDDER=NAME).",
    ),
    "node": _Command(
        "node", "node", "Run a single local Elasticsearch node (needs a JDK 21+ and Maven)."
    ),
    "partitions": _Command(
        "partitions",
        "partitions",
        "List each index behind the alias: the period it covers (UTC, end excluded), its "
        "event count and its size on disk.",
    ),
    "prune": _Command(
        "partitions", "prune", "Delete whole partitions whose period ends at or before DATE."
    ),
    "roles": _Command(
        "access", "roles", "The least-privilege roles: ingest, recall, enrich and admin."
    ),
    "search": _Command("search", "search", "cross_session_search: every session of one user."),
    "search-conversations": _Command(
        "search",
        "search_conversations",
        "Cross-conversation search: a contact's recent conversations in one inbox, of one user.",
    ),
    "search-session": _Command("search", "search_session", "conversation_search: one session."),
    "serve": _Command(
        "serve",
        "serve",
        "Serve the HTTP API: POST /v1/events, the DELETE erasure endpoints, the recall "
        "endpoints, /healthz, /readyz, and its description at /openapi.json.",
    ),
    "sessions": _Command(
        "reads",
        "sessions",
        "List a user's sessions, in session id order, with their first and last instant "
        "and number of events.",
    ),
    "setup": _Command(
        "setup", "setup", "Install the index templates and the current period's partition."
    ),
    "show": _Command(
        "reads", "show", "Print every event of one session, oldest first, a page at a time."
    ),
    "show-event": _Command(
        "reads",
        "show_event",
        "Print a user's event whole (text and payload) by its id, as JSON.",
    ),
    "users": _Command(
        "access",
        "users",
        "Users of the local secured node (`node start --secure`) and their roles.",
    ),
    "tokens": _Command(
        "tokens",
        "tokens",
        "Tokens for serve, each bound to one user (or one ADK app and user) and to what it "
        "may do there.",
    ),
    "tools": _Command(
        "agent_tools",
        "tools",
        "Print the tool definitions (name, description, JSON Schema) as JSON.",
    ),
}


class _LazyGroup(RecallGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        found = COMMANDS.get(name)
        if found is None:
            return None
        module = importlib.import_module(f"session_recall.cli.{found.module}")
        command: click.Command = getattr(module, found.attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        # A bare command of the same help: click shortens it as it would the real one.
        rows = [
            (name, click.Command(name, help=COMMANDS[name].summary).get_short_help_str(limit))
            for name in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="session-recall")
@click.option(
    "--es-url",
    envvar="ELASTICSEARCH_URL",
    show_envvar=True,
    help="Elasticsearch URL, e.g. http://127.0.0.1:9200.",
)
@secret_options("api-key", envvar="ELASTICSEARCH_API_KEY", what="API key", help="API key")
@click.option(
    "--username", envvar="ELASTICSEARCH_USERNAME", show_envvar=True, help="Basic-auth user."
)
@secret_options(
    "password", envvar="ELASTICSEARCH_PASSWORD", what="password", help="Basic-auth password"
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
    api_key_file: Path | None,
    username: str | None,
    password: str | None,
    password_file: Path | None,
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
    from pydantic import ValidationError

    from session_recall.cli.app_context import AppContext
    from session_recall.config import Settings, settings_problem
    from session_recall.core.errors import ConfigurationError

    values: dict[str, str | Path | None] = {
        "ELASTICSEARCH_URL": es_url, "ELASTICSEARCH_API_KEY": api_key,
        "ELASTICSEARCH_API_KEY_FILE": api_key_file,
        "ELASTICSEARCH_USERNAME": username, "ELASTICSEARCH_PASSWORD": password,
        "ELASTICSEARCH_PASSWORD_FILE": password_file,
        "ELASTICSEARCH_CA_CERTS": ca_certs, "SESSION_RECALL_INDEX": index,
        "SESSION_RECALL_HOME": home,
    }  # fmt: skip
    for name in ("ELASTICSEARCH_API_KEY", "ELASTICSEARCH_PASSWORD"):
        if str(values[f"{name}_FILE"]) == "-":  # the secret on standard input
            values[f"{name}_FILE"] = None
            values[name] = sys.stdin.readline().strip()
    try:
        settings = Settings.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as err:
        # Named by its variable, and told as every configuration error is (exit 3).
        raise ConfigurationError(settings_problem(err)) from None
    named = tuple(
        f"--{name} {shlex.quote(str(ctx.params[name]))}"
        for name in ("home", "index")
        if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
    )
    ctx.obj = AppContext(settings, named)


__all__ = ["main"]
