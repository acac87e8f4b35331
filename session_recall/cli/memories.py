"""`session-recall memories search|list`: a user's kept memories from a shell.

(`memory-search`, in `cli.memory`, searches the events themselves.)"""

import json
from collections.abc import Callable, Sequence
from typing import Any

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.core.kept_memories import MEMORY_KINDS, Memory
from session_recall.recall import MAX_MEMORY_LIMIT, MAX_MEMORY_PAGE, MemoriesSearcher
from session_recall.tools.searchers import searchers_for


def _common(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(
        [
            click.option("--user", required=True, help="The user whose memories are read."),
            click.option(
                "--kind",
                "kinds",
                multiple=True,
                type=click.Choice(MEMORY_KINDS),
                help="Only memories of this kind (repeatable).",
            ),
            click.option(
                "--include-superseded",
                is_flag=True,
                help="Also the memories superseded or retired (history), after the current ones.",
            ),
            click.option(
                "--json",
                "as_json",
                is_flag=True,
                help="A JSON array of memories (memoryId, kind, statement, sources, validFrom, "
                "supersededBy: null while current).",
            ),
        ]
    ):
        func = option(func)
    return func


@click.group()
def memories() -> None:
    """A user's kept memories: search them by relevance, or list them newest first."""


def _searcher(app: AppContext, user: str) -> MemoriesSearcher:
    return searchers_for(app.client, app.settings).memories(user_id=user)


def _show(found: Sequence[Memory], as_json: bool) -> None:
    if as_json:
        document = [memory.model_dump(mode="json") for memory in found]
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo("No memories found.")
    for memory in found:
        state = "" if memory.current else f" (until {memory.valid_to})"
        click.echo(f"[{memory.kind}] {memory.statement}  (since {memory.valid_from}{state}; "
                   f"sources: {', '.join(memory.sources)}; id {memory.memory_id})")  # fmt: skip


@memories.command("search")
@_common
@click.option(
    "--limit", type=click.IntRange(1, MAX_MEMORY_LIMIT), default=10, show_default=True,
    help="Memories, most relevant first.",
)  # fmt: skip
@click.argument("query")
@pass_app
def search(
    app: AppContext,
    user: str,
    kinds: tuple[str, ...],
    include_superseded: bool,
    as_json: bool,
    limit: int,
    query: str,
) -> None:
    """The user's current memories that answer QUERY, most relevant first (by words and
    by meaning).

    \b
    Example:
      session-recall memories search --user alice "which database for billing"
    """
    found = _searcher(app, user).search(
        query, kinds=list(kinds), include_superseded=include_superseded, limit=limit
    )
    _show(found.memories, as_json)


@memories.command("list")
@_common
@click.option(
    "--limit", type=click.IntRange(1, MAX_MEMORY_PAGE * 20), default=100, show_default=True,
    help="Memories at most, newest first.",
)  # fmt: skip
@pass_app
def list_memories(
    app: AppContext,
    user: str,
    kinds: tuple[str, ...],
    include_superseded: bool,
    as_json: bool,
    limit: int,
) -> None:
    """The user's current memories, newest first.

    \b
    Example:
      session-recall memories list --user alice --kind decision --include-superseded
    """
    searcher = _searcher(app, user)
    found: list[Memory] = []
    cursor = None
    while len(found) < limit:
        page = searcher.list(
            kinds=list(kinds), include_superseded=include_superseded,
            page_size=min(MAX_MEMORY_PAGE, limit - len(found)), cursor=cursor,
        )  # fmt: skip
        found += page.memories
        cursor = page.next_cursor
        if cursor is None:
            break
    _show(found, as_json)
