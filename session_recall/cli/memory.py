"""`session-recall memory-search`: memory_search from a shell."""

import json

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.recall import DEFAULT_CONTEXT, DEFAULT_LIMIT, SEARCH_MODES, MemoryRequest
from session_recall.tools import OutputBounds, bounded_memory, memory_document, render_memory
from session_recall.tools.searchers import searchers_for


@click.command("memory-search")
@click.option("--user", required=True, help="The user whose sessions are searched.")
@click.option(
    "--mode", type=click.Choice(SEARCH_MODES),
    help="keyword (BM25), semantic (vectors) or hybrid (both, fused).  "
    "[default: hybrid, or keyword when SESSION_RECALL_EMBEDDER=none]",
)  # fmt: skip
@click.option("--since", help="Only events at or after this instant, e.g. 2026-07-01T00:00:00Z.")
@click.option("--until", help="Only events at or before this instant.")
@click.option("--type", "types", multiple=True, help="Only events of this type (repeatable).")
@click.option("--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help="Hits, 1-50.")
@click.option(
    "--context", type=int, default=DEFAULT_CONTEXT, show_default=True,
    help="Events of the same session shown before and after each hit, 0-10.",
)  # fmt: skip
@click.option(
    "--format", "fmt", type=click.Choice(["tool", "json"]), default="tool", show_default=True,
    help="tool: the output a model sees; json: the hits with how the search ran.",
)  # fmt: skip
@click.argument("query")
@pass_app
def memory_search(
    app: AppContext,
    user: str,
    mode: str | None,
    since: str | None,
    until: str | None,
    types: tuple[str, ...],
    limit: int,
    context: int,
    fmt: str,
    query: str,
) -> None:
    """memory_search: a user's events that answer QUERY, most relevant first.

    QUERY is a question or a message, up to 1,000 characters; events match by meaning
    as well as by words. When the embedder is down, the search runs on keywords, and
    the JSON output says so in "notice".

    \b
    Example:
      session-recall memory-search --user alice "what did we decide about the database?"
    """
    # Checked before the node is asked anything: a usage error says so even when it is down.
    request = MemoryRequest.parse(
        query, mode=mode, since=since, until=until, types=list(types) or None, limit=limit,
        context=context,
    )  # fmt: skip
    result = searchers_for(app.client, app.settings).memory(user_id=user).answer(request)
    result = bounded_memory(result, OutputBounds.of(app.settings))  # as a model reads it
    if fmt == "json":
        click.echo(json.dumps(memory_document(result), indent=2, ensure_ascii=False))
    else:
        click.echo(render_memory(result))
