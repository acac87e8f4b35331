"""Sections of the report that one mode writes between markers, and the other modes
carry over untouched when they rewrite the rest."""

import re


def _pattern(start: str, end: str) -> re.Pattern[str]:
    return re.compile(re.escape(start) + ".*?" + re.escape(end) + "\n?", re.S)


def replace(document: str, text: str, *, start: str, end: str) -> str:
    """`document` with `text` in place of the section between the markers, or after
    the rest when there is none yet."""
    pattern = _pattern(start, end)
    if pattern.search(document) is None:
        return document.rstrip("\n") + "\n\n" + text
    return pattern.sub(lambda _: text, document, count=1)


def kept(document: str, *, start: str, end: str) -> str | None:
    """The section between the markers in an existing report, if any."""
    found = _pattern(start, end).search(document)
    return None if found is None else found.group(0)
