"""A tool bound to its scope: the application builds it, the model only calls it.

`BoundTool.call(arguments)` takes the arguments exactly as a model sends them and
returns a `ToolResult`: the reference's output string, or, whatever went wrong, one
short line the model can act on (never a stack trace or an Elasticsearch error body)
with `is_error` set, which MCP passes on as `isError`. What it answers is bounded
(`tools.bounds`), as its description says.
"""

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from elasticsearch import TransportError
from pydantic import BaseModel, ValidationError

from session_recall.core.errors import ElasticsearchUnavailable, ErrorKind, SessionRecallError
from session_recall.error_policy import tool_text
from session_recall.recall import (
    ConversationSearcher,
    CrossConversationSearcher,
    CrossSessionSearcher,
    MemorySearcher,
    MemorySearchResult,
    RecallPage,
)
from session_recall.tools.arguments import (
    ConversationSearchArguments,
    CrossConversationSearchArguments,
    CrossSessionSearchArguments,
    MemorySearchArguments,
)
from session_recall.tools.bounds import DEFAULT_BOUNDS, OutputBounds, bounded_memory, bounded_page
from session_recall.tools.definitions import (
    CONVERSATION_SEARCH,
    CROSS_CONVERSATION_SEARCH,
    CROSS_SESSION_SEARCH,
    MEMORY_SEARCH,
    ToolSpec,
)
from session_recall.tools.memory_output import render_memory
from session_recall.tools.output import render_items

log = logging.getLogger(__name__)

UNAVAILABLE = "The search is unavailable right now; try again in a moment."

# What a tool's search returns: a page in time order, or memory_search's ranked hits.
Result = RecallPage | MemorySearchResult


@dataclass(frozen=True)
class ToolResult:
    """What a tool call gives the model: its text, and whether that text is an error.
    `str()` is the text, so printing a result prints what the model reads."""

    text: str
    is_error: bool = False

    @classmethod
    def failure(cls, err: SessionRecallError) -> "ToolResult":
        return cls(tool_text(err), is_error=True)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class BoundTool:
    spec: ToolSpec
    # (validated arguments, cursor) -> page; the cursor comes from the application, never
    # from the model's arguments.
    search: Callable[[Any, str | None], Any]
    with_session: bool = True
    # How much text an answer holds: each event's, and all of them together.
    bounds: OutputBounds = DEFAULT_BOUNDS
    # Each event's eventId in the rows: the application's choice, for an agent that
    # cites events as a memory's sources (save_memory).
    with_event_id: bool = False
    # How a result reads, for a tool whose result is no search page (the kept-memory
    # tools, which keep their answers within `bounds` themselves); None: a page's
    # rows, or memory_search's hits.
    renderer: Callable[[Any], str] | None = None
    # The line a model reads when Elasticsearch fails in a way recall did not name.
    unavailable: str = UNAVAILABLE

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        """The spec's description, with the bounds this tool answers within."""
        return self.spec.describe(self.bounds)

    def parse(self, arguments: Mapping[str, Any]) -> BaseModel:
        """Validated arguments, or a `ToolArgumentError` whose text a model can act on."""
        try:
            return self.spec.arguments.model_validate(dict(arguments))
        except ValidationError as err:
            raise ToolArgumentError(_describe(err, self.spec)) from None

    def run(self, arguments: Mapping[str, Any], *, cursor: str | None = None) -> Any:
        """The typed page, its texts within the bounds, or a `SessionRecallError`
        (`ToolArgumentError`, `RecallError`...)."""
        args = self.parse(arguments)
        # Logged without innerThought, which stays private to the model; dumped only
        # when the line is written.
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s %s", self.name, args.model_dump(by_alias=True))
        try:
            found = self.search(args, cursor)
        except SessionRecallError as err:
            if err.kind is ErrorKind.CALLER:
                # The caller's to fix, and its answer says how; the message echoes the
                # arguments (a date, a query's words), which stay out of the log.
                log.info("%s refused the caller's request: %s", self.name, type(err).__name__)
            else:
                log.warning("%s failed: %s", self.name, err)
            raise
        except TransportError as err:  # anything the recall transport did not name
            log.warning("%s failed: %s", self.name, type(err).__name__)
            raise ElasticsearchUnavailable(self.unavailable) from None
        if self.renderer is not None:
            return found
        if isinstance(found, MemorySearchResult):
            return bounded_memory(found, self.bounds)
        return bounded_page(found, self.bounds)

    def render(self, page: Any) -> str:
        if self.renderer is not None:
            return self.renderer(page)
        if isinstance(page, MemorySearchResult):
            return render_memory(page, with_event_id=self.with_event_id)
        return render_items(
            page.items, with_session=self.with_session, with_event_id=self.with_event_id
        )

    def call(self, arguments: Mapping[str, Any]) -> ToolResult:
        """The reference's output for a model's call; errors become one short line."""
        try:
            return ToolResult(self.render(self.run(arguments)))
        except SessionRecallError as err:
            return ToolResult.failure(err)


class ToolArgumentError(SessionRecallError):
    """The model's arguments do not fit the tool's schema (or name no tool)."""

    kind = ErrorKind.CALLER


def _describe(err: ValidationError, spec: ToolSpec) -> str:
    # Built from locations and messages only: pydantic's `input` would echo what the
    # model sent, innerThought included.
    allowed = ", ".join(field.alias or name for name, field in spec.arguments.model_fields.items())
    problems = []
    for error in err.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "extra_forbidden":
            problems.append(f"unknown argument '{where}'")
        elif error["type"] == "missing":
            problems.append(f"'{where}' is required")
        else:
            problems.append(f"'{where}': {error['msg']}")
    return f"{'; '.join(problems)}. {spec.name} takes: {allowed}; its scope is fixed."


def cross_session_tool(
    searcher: CrossSessionSearcher,
    *,
    bounds: OutputBounds = DEFAULT_BOUNDS,
    event_ids: bool = False,
) -> BoundTool:
    """cross_session_search; `event_ids` adds each event's eventId to the rows (for an
    agent that saves memories from what it finds)."""

    def search(args: CrossSessionSearchArguments, cursor: str | None) -> RecallPage:
        return searcher.search(
            args.query, match=args.match_mode, since=args.since, page=args.page, cursor=cursor
        )

    return BoundTool(CROSS_SESSION_SEARCH, search, bounds=bounds, with_event_id=event_ids)


def conversation_tool(
    searcher: ConversationSearcher, *, bounds: OutputBounds = DEFAULT_BOUNDS
) -> BoundTool:
    def search(args: ConversationSearchArguments, cursor: str | None) -> RecallPage:
        return searcher.search(args.query, page=args.page, cursor=cursor)

    return BoundTool(CONVERSATION_SEARCH, search, with_session=False, bounds=bounds)


def cross_conversation_tool(
    searcher: CrossConversationSearcher,
    *,
    current_session_id: str | None,
    bounds: OutputBounds = DEFAULT_BOUNDS,
) -> BoundTool:
    def search(args: CrossConversationSearchArguments, cursor: str | None) -> RecallPage:
        return searcher.search(
            args.query,
            current_session_id=current_session_id,
            match=args.match_mode,
            page=args.page,
            cursor=cursor,
        )

    return BoundTool(CROSS_CONVERSATION_SEARCH, search, bounds=bounds)


def memory_tool(
    searcher: MemorySearcher,
    *,
    mode: str | None = None,
    bounds: OutputBounds = DEFAULT_BOUNDS,
    event_ids: bool = False,
) -> BoundTool:
    """memory_search; `mode` is the application's choice (default: the searcher's);
    `event_ids` adds each hit's eventId to its row."""

    def search(args: MemorySearchArguments, _cursor: str | None) -> MemorySearchResult:
        return searcher.search(
            args.query,
            mode=mode,
            since=args.since,
            until=args.until,
            types=args.types,
            limit=args.limit,
            context=args.context,
        )

    return BoundTool(MEMORY_SEARCH, search, bounds=bounds, with_event_id=event_ids)
