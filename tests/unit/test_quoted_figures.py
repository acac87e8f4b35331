"""Every figure the README and the docs quote from BENCHMARKS.md is the report's own.

A quote sits between `<!-- figures ... -->` and `<!-- /figures -->` (HTML comments: the
page shows nothing of them). Each number in it must be one of the report's numbers,
as the report writes it (4.26, not 4.3): a run that changes the report makes a quote it
left behind fail here, and says which. The README's figures are all quoted."""

import re

import pytest

from tests.support.docs import pages
from tests.support.elasticsearch import REPO

QUOTE = re.compile(r"<!-- figures\b[^>]*-->(.*?)<!-- /figures -->", re.S)
# A number as prose writes it: 30,001 or 4.26 or 17,224 (of 17,224x). Not a part of a
# word (1M, 10k, e5-small, a commit id), nor of a longer number.
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\d]|[^\W\dx])")


def figures(text: str) -> list[str]:
    return _NUMBER.findall(text)


def quotes(text: str) -> list[str]:
    return QUOTE.findall(text)


def _report_figures() -> set[str]:
    return set(figures((REPO / "BENCHMARKS.md").read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("30,001 events/s, 2.14x, 4.26 ms (p50); 7.3 µs", ["30,001", "2.14", "4.26", "7.3"]),
        ("at 1M events, 10k, e5-small, commit 48f60c5", []),
        ("2026-12-03 10:26 UTC, 1,100,014.", ["2026", "12", "03", "10", "26", "1,100,014"]),
        ("recall@10 of 0.692 (0.535)", ["10", "0.692", "0.535"]),
    ],
)
def test_a_number_is_read_as_prose_writes_it(text: str, found: list[str]):
    assert figures(text) == found


def test_every_quoted_figure_is_the_reports():
    report = _report_figures()
    stale = {}
    for page in pages():
        for quote in quotes((REPO / page).read_text(encoding="utf-8")):
            missing = [number for number in figures(quote) if number not in report]
            if missing:
                stale[page] = [*stale.get(page, []), *missing]
    assert not stale, f"figures that BENCHMARKS.md does not hold (quote it anew): {stale}"


def test_the_readme_and_the_benchmarks_page_quote_the_report():
    for page in ("README.md", "docs/benchmarks.md"):
        quoted = quotes((REPO / page).read_text(encoding="utf-8"))
        assert quoted and all(figures(quote) for quote in quoted), page


def test_every_figure_of_the_readme_is_a_quote():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Figures\n", 1)[1].split("\n## ", 1)[0]
    outside = QUOTE.sub("", section)
    assert not figures(outside), f"figures of the README outside a quote: {figures(outside)}"
    # Each names what it measured: the heap, the embedder and the core.
    for words in ("heap", "embedder", "native core", "enrich"):
        assert words in section, words
