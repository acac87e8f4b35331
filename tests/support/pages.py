"""Reading a search to its end, by cursor, as a caller would."""

from typing import Protocol

from session_recall.recall import RecallPage


class _Searcher(Protocol):
    def search(self, query: str, *, cursor: str | None = None) -> RecallPage: ...


def cursor_pages(searcher: _Searcher, query: str) -> list[list[str]]:
    """The event ids of every page, first to last, following each page's cursor."""
    pages, page = [], searcher.search(query)
    while True:
        pages.append([item.event_id for item in page.items])
        if page.next_cursor is None:
            return pages
        page = searcher.search(query, cursor=page.next_cursor)


def served(searcher: _Searcher, query: str) -> list[str]:
    """Every event id the search serves, in order."""
    return [event_id for page in cursor_pages(searcher, query) for event_id in page]
