"""Tool output cut to the text limit (`truncation.cut`): within it, head and tail kept."""

import pytest

from session_recall.core.instant import Instant
from session_recall.indexer import Event
from session_recall.indexer.truncation import cut


def _event(text: str) -> Event:
    return Event(
        event_id="e", user_id="u", session_id="s", timestamp=Instant.parse("2026-07-01T00:00:00Z"),
        type="tool_result", text=text,
    )  # fmt: skip


@pytest.mark.parametrize("text", ["a" * 5000, "é" * 3000, "🦀" * 2000, "ab" + "€" * 2000 + "yz"])
def test_cut_keeps_head_and_tail_within_the_limit_on_character_boundaries(text: str) -> None:
    kept = cut(_event(text), 1000)

    size = len(text.encode())
    assert kept.truncated == size
    assert len(kept.text.encode()) <= 1000
    head, tail = kept.text.split(f"\n…[truncated, {size:,} bytes]…\n")
    assert text.startswith(head) and text.endswith(tail)
    assert len(head.encode()) > 400 and len(tail.encode()) > 400
    assert kept.event_id == "e"
