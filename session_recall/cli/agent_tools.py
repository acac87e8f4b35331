"""`session-recall tools` and `session-recall mcp`: the tools as agents take them."""

import json
import logging
import sys
from dataclasses import replace

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.cli.options import limit_options
from session_recall.client import failover_only
from session_recall.indexer import MemoryWriter
from session_recall.recall import DEFAULT_LOOKBACK_DAYS, CrossConversationSettings
from session_recall.tools import (
    STYLES,
    TOOLS,
    BoundTool,
    OutputBounds,
    cross_conversation_tool,
    cross_session_tool,
    kept_memory_tools,
    memory_tool,
    tool_definitions,
)
from session_recall.tools.searchers import searchers_for


@click.command("tools")
@click.option(
    "--style", type=click.Choice(STYLES), default="openai", show_default=True,
    help="openai: function calling; anthropic: tool use; mcp: MCP tool listing.",
)  # fmt: skip
@click.argument("names", nargs=-1, type=click.Choice(sorted(TOOLS)))
@pass_app
def tools(app: AppContext, style: str, names: tuple[str, ...]) -> None:
    """Print the tool definitions (name, description, JSON Schema) as JSON.

    \b
    Example:
      session-recall tools --style anthropic cross_session_search
    """
    bounds = OutputBounds.of(app.settings)  # the descriptions state the deployment's bounds
    definitions = tool_definitions(list(names) or None, style, bounds)  # type: ignore[arg-type]
    click.echo(json.dumps(definitions, indent=2, ensure_ascii=False))


@click.command("mcp")
@click.option(
    "--user", required=True,
    help="The user whose sessions and kept memories the tools read.",
)  # fmt: skip
@click.option(
    "--contact", help="With --inbox: also serve cross_conversation_search (within --user)."
)
@click.option("--inbox", help="The inbox of --contact.")
@click.option("--current-session", help="The conversation the agent is in.")
@click.option(
    "--lookback-days", type=int, show_default=str(DEFAULT_LOOKBACK_DAYS),
    help="With --contact: how recent a conversation's last message must be.",
)  # fmt: skip
@click.option(
    "--memory-writes", is_flag=True,
    help="Also serve save_memory and retire_memory (for an agent that keeps memories); the "
    "search tools' rows then carry each event's eventId, which save_memory takes as a source.",
)  # fmt: skip
@limit_options("read_deadline")
@pass_app
def mcp(
    app: AppContext,
    user: str,
    contact: str | None,
    inbox: str | None,
    current_session: str | None,
    lookback_days: int | None,
    memory_writes: bool,
    read_deadline: float,
) -> None:
    """Serve the recall tools (cross_session_search, memory_search, recall_memories) over
    stdio to an MCP client, bound to one user.

    With --memory-writes, save_memory and retire_memory too. The scope is fixed here,
    on the command line: no tool call can change it. With --contact and --inbox,
    recall_memories keeps to the memories saved in that scope, and save_memory saves
    each memory in it.

    \b
    Example:
      session-recall mcp --user alice --contact c-42 --inbox web
      session-recall mcp --user alice --memory-writes
    """
    if bool(contact) != bool(inbox):
        raise click.UsageError("--contact and --inbox go together.")
    # Imported here: the MCP SDK is heavy, and no other command needs it.
    import anyio

    from session_recall.mcp_server import build_server, serve_stdio

    # stdout carries the protocol: anything else a library logs goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    # A tool call answers within the deadline, as over HTTP: each request is cut there
    # (a hung node gives the "unavailable" line, not a minute of silence), and
    # Elasticsearch stops a heavy search there too.
    client = app.client.options(request_timeout=read_deadline, **failover_only(app.settings))
    searchers = searchers_for(client, app.settings, search_timeout=read_deadline)
    bounds = OutputBounds.of(app.settings)
    turns = searchers.memory(user_id=user)
    writer = (
        MemoryWriter(
            client,
            app.settings.index,
            user_id=user,
            embedder=searchers.embedder,
            contact_id=contact,
            inbox_id=inbox,
        )
        if memory_writes
        else None
    )
    bound: list[BoundTool] = [
        cross_session_tool(
            searchers.cross_session(user_id=user), bounds=bounds, event_ids=memory_writes
        ),
        memory_tool(turns, bounds=bounds, event_ids=memory_writes),
    ]
    if contact and inbox:
        settings = CrossConversationSettings.of(enabled=True, lookback_days=lookback_days)
        searcher = searchers.cross_conversation(
            user_id=user, contact_id=contact, inbox_id=inbox, settings=settings
        )
        bound.append(
            cross_conversation_tool(searcher, current_session_id=current_session, bounds=bounds)
        )
    bound += kept_memory_tools(
        searchers.memories(user_id=user),
        writer,
        turns=turns,
        contact_id=contact,
        inbox_id=inbox,
        keywords=replace(searchers, embedder=None).memories(user_id=user),
        bounds=bounds,
    )
    anyio.run(serve_stdio, build_server(bound))
