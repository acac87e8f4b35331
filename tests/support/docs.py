"""The examples of README.md and docs/: every fenced block, in reading order (README,
then the site's navigation), with what it is and whether it runs.

A block is an example when its language is `sh`, `python` or `json`; each runs, unless
the line before its fence says why not (`<!-- not run: REASON -->`). A `java` block is
a section of the Spring AI module's tests, included, and runs with them. A block of any
other language is configuration or output (`yaml`, `text`), never run; a fence without
a language, or a language the suite does not know, is refused, so no example slips in
unrun."""

import re
from dataclasses import dataclass
from typing import Any

import yaml

from tests.support.elasticsearch import REPO

EXAMPLES = ("sh", "python", "json")
# Configuration or output, never run; `xml` and `groovy` are the Spring AI page's Maven
# and Gradle dependency lines.
NOT_EXAMPLES = ("yaml", "text", "xml", "groovy")
# Java blocks run in the Spring AI module's own tests: each is a section of one of them,
# included with `--8<--` (tests/unit/test_docs.py holds that).
JVM_EXAMPLES = ("java",)
_FENCE = re.compile(
    r"^(?:<!-- not run: (?P<reason>[^\n]*?) -->\n)?```(?P<lang>[^\n]*)\n(?P<body>.*?)^```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Block:
    page: str  # README.md, or docs/NAME.md
    line: int
    lang: str
    body: str
    not_run: str | None  # the reason, when it is an example that does not run

    @property
    def runs(self) -> bool:
        return self.lang in EXAMPLES and self.not_run is None

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.lang})"


def pages() -> list[str]:
    """README.md, then every page of the site in its navigation's order."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    return ["README.md", *(f"docs/{name}" for name in _nav_files(config["nav"]))]


def blocks(page: str) -> list[Block]:
    text = (REPO / page).read_text(encoding="utf-8")
    return [
        Block(
            page=page,
            line=text.count("\n", 0, found.start("lang")) + 1,
            lang=found["lang"].strip(),
            body=found["body"],
            not_run=found["reason"],
        )
        for found in _FENCE.finditer(text)
    ]


def headings(page: str) -> list[str]:
    """The page's headings' texts, outside code blocks."""
    text = _FENCE.sub("", (REPO / page).read_text(encoding="utf-8"))
    return [m[1].strip() for m in re.finditer(r"^#{1,6} (.+)$", text, re.MULTILINE)]


def _nav_files(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in _nav_files(value)]
    return [f for item in nav for f in _nav_files(item)]
