"""The bounds of a recall answer (`tools.bounds`): pure, so checked without a node."""

from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.echo import cut, marker
from session_recall.core.instant import Instant
from session_recall.recall import MemoryHit, MemorySearchResult, RecallItem, RecallPage, Score
from session_recall.tools import OutputBounds, bounded_memory, bounded_page, render_items
from session_recall.tools.bounds import share

AT = Instant.parse("2026-03-01T10:00:00Z")


def _item(i: int, text: str) -> RecallItem:
    return RecallItem(session_id="s", timestamp=AT, type="t", text=text, event_id=f"e{i}")


def test_a_cut_text_ends_with_its_whole_length():
    assert marker(936_112) == "…[truncated, 936,112 characters]"
    assert cut("abcdef", 3) == "abc…[truncated, 6 characters]"
    assert cut("abc", 3) == "abc"


def test_short_texts_stay_whole_and_long_ones_share_what_is_left():
    bounds = OutputBounds(hit_chars=100, answer_chars=130)
    assert share([10, 20], bounds) == 100
    assert share([10, 500, 500], bounds) == 60
    assert share([500] * 3, bounds) == 43
    assert share([500] * 3, bounds, rest=1_000) == 0


@given(st.lists(st.integers(min_value=0, max_value=5_000), max_size=40))
def test_the_texts_of_an_answer_fit_in_its_bound(lengths: list[int]):
    bounds = OutputBounds(hit_chars=2_000, answer_chars=20_000)
    limit = share(lengths, bounds)
    assert limit <= bounds.hit_chars
    assert sum(min(length, limit) for length in lengths) <= bounds.answer_chars


def test_a_bounded_page_keeps_every_event_and_its_cursor():
    page = RecallPage(items=[_item(0, "x" * 5_000), _item(1, "short")], next_cursor="c")
    bounded = bounded_page(page, OutputBounds(hit_chars=2_000, answer_chars=20_000))
    assert bounded.next_cursor == "c"
    assert [item.full_length for item in bounded.items] == [5_000, None]
    assert bounded.items[0].text == "x" * 2_000 + marker(5_000)
    assert bounded.items[1] == page.items[1]
    assert page.items[0].text == "x" * 5_000  # the caller's page is left as it was


def test_a_cut_row_names_its_event():
    bounded = bounded_page(RecallPage(items=[_item(7, "y" * 3_000), _item(8, "z")]))
    assert render_items(bounded.items) == (
        '[{"sessionId":"s","timestamp":"2026-03-01T10:00:00Z","type":"t",'
        f'"text":"{"y" * 2_000}…[truncated, 3,000 characters]","eventId":"e7"}},'
        '{"sessionId":"s","timestamp":"2026-03-01T10:00:00Z","type":"t","text":"z"}]'
    )


def test_memory_hits_and_their_neighbours_share_one_bound():
    hit = MemoryHit(
        event=_item(0, "a" * 9_000),
        before=[_item(1, "b" * 9_000)],
        after=[_item(2, "c" * 9_000)],
        score=Score(fused=1.0),
    )
    result = MemorySearchResult(hits=[hit], mode="keyword", requested_mode="keyword")
    bounded = bounded_memory(result, OutputBounds(hit_chars=2_000, answer_chars=3_000))
    [cut_hit] = bounded.hits
    lengths = [
        len(i.text) - len(marker(9_000)) for i in (cut_hit.event, *cut_hit.before, *cut_hit.after)
    ]
    assert len(set(lengths)) == 1 and 0 < lengths[0] < 1_000
