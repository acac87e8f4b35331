"""The semantic benchmark's section of the report replaces its earlier self only."""

from bench.semantic import END, START, kept_section, replace_section

SECTION = f"{START}\n## Semantic recall\nnew figures\n{END}\n"


def test_a_report_without_the_section_gains_it_at_the_end():
    report = "# Benchmarks\n\nrest\n"
    assert replace_section(report, SECTION) == f"{report}\n{SECTION}"


def test_the_section_is_replaced_in_place_and_the_rest_kept():
    old = f"# Benchmarks\n\n{START}\nold figures\n{END}\n\n## Method\n"
    new = replace_section(old, SECTION)
    assert "old figures" not in new and "new figures" in new and new.endswith("## Method\n")


def test_a_full_run_carries_the_section_over():
    old = f"# Benchmarks\n\nold\n\n{SECTION}"
    assert kept_section(old) == SECTION
    assert kept_section("# Benchmarks\n") is None
    assert replace_section("# Benchmarks\n\nnew full run\n", SECTION).endswith(SECTION)
