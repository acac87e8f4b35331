"""Pagination at depth: cursors under concurrent writes, page numbers past the window.

The module's index has a small `index.max_result_window`, and the searchers are told
it: a few hundred events then take the paths that 10,000 would on the default window.
"""

import threading
from collections.abc import Iterator

import pytest
from elasticsearch import BadRequestError, Elasticsearch

from session_recall.core.instant import Instant
from session_recall.node import wait_until
from session_recall.recall import CrossSessionSearcher, RecallPage
from tests.support.events import Event, event, write_events

pytestmark = pytest.mark.integration

KEY = b"paging-test-cursor-key-32-bytes!"
START = Instant.parse("2026-07-01T00:00:00Z").nanos
MATCH, OTHER = "we decided to ship", "unrelated chatter"
# A few hundred events reach past it; Elasticsearch refuses any from + size beyond it.
WINDOW = 100


def dataset(user_id: str, matches: int) -> list[Event]:
    """`matches` matching events, in threes that share an instant, ids out of time order,
    and a non-matching event after every fourth one."""
    events = []
    for i in range(matches):
        at = Instant(START + (i // 3) * 1_000_000)
        # A permutation of 0..matches-1, so the event_id order is not the writing order.
        eid = f"{user_id}-{(i * 7919) % matches:06d}"
        events.append(event(eid, user_id=user_id, session_id=f"s{i % 7}", text=MATCH, timestamp=at))
        if i % 4 == 0:
            events.append(
                event(f"{eid}-x", user_id=user_id, session_id="s0", text=OTHER, timestamp=at)
            )
    return events


def in_order(events: list[Event]) -> list[str]:
    """Event ids of the matching events as recall must return them."""
    matching = [e for e in events if e["text"] == MATCH]
    matching.sort(key=lambda e: (Instant.parse(e["timestamp"]).nanos, e["event_id"]))
    return [e["event_id"] for e in matching]


DEEP = dataset("deep", 250)  # 25 pages of 10: up to two hops past the window
WALKER = dataset("walker", 500)


@pytest.fixture(scope="module")
def alias(es: Elasticsearch, module_alias: str) -> str:
    # Written first: the setting goes on the partitions the events were stored in.
    write_events(es, module_alias, DEEP + WALKER)
    es.indices.put_settings(index=module_alias, settings={"index.max_result_window": WINDOW})
    return module_alias


def searcher(es: Elasticsearch, alias: str, user_id: str, **options: int) -> CrossSessionSearcher:
    return CrossSessionSearcher(
        es, alias=alias, user_id=user_id, cursor_key=KEY, max_result_window=WINDOW, **options
    )


def ids(page: RecallPage) -> list[str]:
    return [item.event_id for item in page.items]


def test_the_index_refuses_a_request_past_its_window(es, alias):
    # What makes the tests below prove something: the small window is enforced.
    with pytest.raises(BadRequestError, match="Result window is too large"):
        es.search(index=alias, routing="deep", from_=WINDOW, size=1)


# Page 8 is the last that from/size reaches (each page asks for one hit more), 9 the
# first that hops, 20 and 24 (the last) hop twice.
@pytest.mark.parametrize("number", [0, 8, 9, 10, 20, 24])
def test_any_page_number_returns_exactly_its_events(es, alias, number):
    expected = in_order(DEEP)
    deep = searcher(es, alias, "deep")
    page = deep.search(MATCH, page=number)
    assert ids(page) == expected[number * 10 : number * 10 + 10]
    if number < 24:
        following = deep.search(MATCH, cursor=page.next_cursor)
        assert ids(following) == expected[number * 10 + 10 : number * 10 + 20]
    else:
        assert page.next_cursor is None


def test_a_page_number_past_the_end_is_empty_not_an_error(es, alias):
    deep = searcher(es, alias, "deep")
    assert deep.search(MATCH, page=25) == RecallPage(items=[])
    assert deep.search(MATCH, page=10**9) == RecallPage(items=[])


class Writer(threading.Thread):
    """Indexes matching events for one user, a small batch at a time, until stopped."""

    def __init__(self, es: Elasticsearch, alias: str, user_id: str) -> None:
        super().__init__(daemon=True)
        self.es, self.alias, self.user_id = es, alias, user_id
        self.written = 0
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                batch = [
                    event(
                        f"new-{self.written + n:06d}",
                        user_id=self.user_id,
                        session_id="live",
                        text=MATCH,
                        # After every preloaded match, whatever this machine's clock says.
                        timestamp=Instant(START + 10**15 + self.written + n),
                    )
                    for n in range(20)
                ]
                self.written += write_events(self.es, self.alias, batch)
        except BaseException as err:  # surfaced by the test
            self.error = err


@pytest.fixture
def writer(es: Elasticsearch, alias: str) -> Iterator[Writer]:
    thread = Writer(es, alias, "walker")
    yield thread
    thread.stop.set()
    if thread.is_alive():
        thread.join(timeout=60)


def test_paging_by_cursor_returns_every_match_once_while_events_arrive(es, alias, writer):
    walker = searcher(es, alias, "walker", page_size=50)
    page = walker.search(MATCH)
    served = ids(page)
    writer.start()

    def new_events_visible() -> bool:
        found = es.count(index=alias, routing="walker", query={"term": {"session_id": "live"}})
        return found["count"] > 0

    assert wait_until(new_events_visible, timeout=60), writer.error
    while page.next_cursor is not None:
        page = walker.search(MATCH, cursor=page.next_cursor)
        served += ids(page)
    writer.stop.set()
    writer.join(timeout=60)
    assert writer.error is None and writer.written > 0

    assert len(served) == len(set(served)) == 500
    assert served == in_order(WALKER)
    # A fresh search, with no cursor, does see the new events.
    fresh = searcher(es, alias, "walker", page_size=50)
    assert fresh.search(MATCH, page=10).items[0].session_id == "live"
