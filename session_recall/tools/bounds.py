"""How much text a recall answer gives a model: each event's text, and the texts of one
answer together, are bounded. Pure: results in, bounded copies out.

A model reads every character a tool answers, and a platform that keeps conversation
memory keeps it too: ten events of 936 KB made a 9.36 MB answer, and memory_search,
which shows each hit's neighbours, 26.2 MB. So each text is cut at `hit_chars` (2,000
characters by default), and when an answer would still be longer than `answer_chars`
(20,000), the longest texts are cut further, to an equal share of what the rest of
the answer (its other fields, `ROW_CHARS` an event) leaves, so that the short ones stay
whole. Nothing is dropped: a page keeps every event, and its cursor and page numbers
stay right; so an answer of very many events (memory_search's 50 hits with 10
neighbours each) may pass `answer_chars` by their other fields alone.

A cut text ends with `…[truncated, 936,112 characters]` (the whole text's length), and
its event says so (`RecallItem.full_length`); the tools' output then carries its
`eventId`, by which the application reads the whole event
(`GET /v1/users/{user}/events/{event}`, `session-recall show-event`).

Every surface cuts here: the tools (CLI, HTTP, MCP, the OpenAI Agents tool), the
LangChain retriever and ADK's memory service.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from session_recall.config import DEFAULT_TOOL_ANSWER_CHARS, DEFAULT_TOOL_HIT_CHARS, Settings
from session_recall.core.echo import marker
from session_recall.recall import MemoryHit, MemorySearchResult, RecallItem, RecallPage


@dataclass(frozen=True)
class OutputBounds:
    """Characters: of each event's text, and of the texts of one answer together."""

    hit_chars: int = DEFAULT_TOOL_HIT_CHARS
    answer_chars: int = DEFAULT_TOOL_ANSWER_CHARS

    @classmethod
    def of(cls, settings: Settings) -> "OutputBounds":
        """The bounds a deployment set (SESSION_RECALL_TOOL_HIT_CHARS and
        SESSION_RECALL_TOOL_ANSWER_CHARS)."""
        return cls(hit_chars=settings.tool_hit_chars, answer_chars=settings.tool_answer_chars)

    def note(self) -> str:
        """The sentence a tool description states the bounds with."""
        return (
            f" Each event's text is cut at {self.hit_chars:,} characters, and the texts of "
            f"one answer at {self.answer_chars:,} together: a cut text ends with "
            "'…[truncated, N characters]' (N: its whole length), and its eventId lets the "
            "application read the whole event."
        )


DEFAULT_BOUNDS = OutputBounds()
# What an event's row holds besides its text and ids, about: the field names, the
# instant, the cut's marker, a hit's score.
ROW_CHARS = 140


def share(lengths: Sequence[int], bounds: OutputBounds, *, rest: int = 0) -> int:
    """The longest a text of an answer may be: `hit_chars`, or less, so that the texts
    of lengths `lengths` fit, together with `rest` characters of the answer's other
    fields, in `answer_chars`. The shorter texts are kept whole and the longer ones
    share what is left equally."""
    capped = sorted(min(length, bounds.hit_chars) for length in lengths)
    budget = max(0, bounds.answer_chars - rest)
    for i, length in enumerate(capped):
        left = len(capped) - i
        if length * left > budget:  # this text and every longer one: an equal share
            return budget // left
        budget -= length
    return bounds.hit_chars


def bounded_page(page: RecallPage, bounds: OutputBounds = DEFAULT_BOUNDS) -> RecallPage:
    """The page with its texts within the bounds; its cursor unchanged."""
    limit = share([len(item.text) for item in page.items], bounds, rest=_rest(page.items))
    return page.model_copy(update={"items": [_cut(item, limit) for item in page.items]})


def bounded_memory(
    result: MemorySearchResult, bounds: OutputBounds = DEFAULT_BOUNDS
) -> MemorySearchResult:
    """memory_search's result with its texts within the bounds: the hits' and their
    neighbours', which count alike."""
    items = [item for hit in result.hits for item in (hit.event, *hit.before, *hit.after)]
    limit = share([len(item.text) for item in items], bounds, rest=_rest(items))
    return result.model_copy(update={"hits": [_cut_hit(hit, limit) for hit in result.hits]})


def _rest(items: Sequence[RecallItem]) -> int:
    """About how many characters the rows of `items` hold besides their texts."""
    return sum(
        ROW_CHARS + len(item.session_id) + len(item.event_id) + len(item.type or "")
        for item in items
    )


def _cut_hit(hit: MemoryHit, limit: int) -> MemoryHit:
    return hit.model_copy(
        update={
            "event": _cut(hit.event, limit),
            "before": [_cut(item, limit) for item in hit.before],
            "after": [_cut(item, limit) for item in hit.after],
        }
    )


def _cut(item: RecallItem, limit: int) -> RecallItem:
    if len(item.text) <= limit:
        return item
    whole = item.full_length or len(item.text)
    text = item.text[:limit] + marker(whole)
    return item.model_copy(update={"text": text, "full_length": whole})
