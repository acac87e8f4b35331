"""Which index patterns can make an alias's partitions: worked out from the patterns
themselves (`*` their only wildcard), as Elasticsearch matches them; and a partition
in another alias, or not in its own, is refused with its name."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_recall.indexer.ownership import ForeignPartition, _overlap, check_existing

PATTERNS = st.text(alphabet="ab*", max_size=6)


def _instances(pattern: str, length: int) -> set[str]:
    words = ("".join(w) for n in range(length + 1) for w in itertools.product("ab", repeat=n))
    return {w for w in words if _overlap(pattern, w)}


@settings(max_examples=300)
@given(first=PATTERNS, second=PATTERNS)
def test_two_patterns_overlap_exactly_when_some_name_matches_both(first: str, second: str):
    # A shortest common name is no longer than the letters of both patterns.
    longest = len(first.replace("*", "")) + len(second.replace("*", ""))
    common = _instances(first, longest) & _instances(second, longest)
    assert _overlap(first, second) == bool(common) == _overlap(second, first)


@given(name=st.text(alphabet="ab-.", min_size=1, max_size=8))
def test_a_name_matches_itself_and_a_star_and_its_prefix_star(name: str):
    assert _overlap(name, name) and _overlap("*", name) and _overlap(name[:1] + "*", name)
    assert not _overlap(name + "x", name)


@pytest.mark.parametrize(
    ("aliases", "says"),
    [
        ({"events": {}, "rival": {}}, "also in the alias(es) 'rival'"),
        ({"rival": {}}, "also in the alias(es) 'rival'"),
        ({}, "is not in the alias 'events'"),
    ],
)
def test_a_partition_of_another_alias_or_of_none_is_refused_with_its_name(aliases, says):
    with pytest.raises(ForeignPartition) as refused:
        check_existing("events", "events-2024.03", aliases)
    assert says in str(refused.value) and "events-2024.03" in str(refused.value)
    check_existing("events", "events-2024.03", {"events": {}})  # its own: fine
