"""No two aliases that `setup` accepts can share an index, a template pattern or a
role's index names, whichever was made first; and the names it refuses could."""

import re
from datetime import UTC, datetime
from fnmatch import fnmatchcase

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from session_recall.core.index_names import shared_names, tombstone_index
from session_recall.core.instant import Instant
from session_recall.core.partitions import GRANULARITIES, index_patterns, partition_of
from session_recall.security.roles import descriptor

ALIASES = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,12}", fullmatch=True)
SUFFIXES = st.from_regex(r"[a-z0-9_-]{1,10}", fullmatch=True)
MOMENTS = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2262, 1, 1))


def _names(alias: str, moment: datetime) -> set[str]:
    """The alias and every index it may own: a partition of each period holding
    `moment`, its tombstones, and the single-index layout's first index."""
    stamp = Instant.from_datetime(moment.replace(tzinfo=UTC))
    partitions = {partition_of(alias, stamp, period).index for period in GRANULARITIES}
    return {alias, *partitions, tombstone_index(alias), f"{alias}-000001"}


def _claims(alias: str, name: str) -> bool:
    """Whether `name` is one of `alias`'s: an index of its own, one its template takes
    in, or one its roles grant."""
    if name in (alias, tombstone_index(alias)) or any(
        fnmatchcase(name, pattern) for pattern in index_patterns(alias)
    ):
        return True
    granted = [n for grant in descriptor(alias, "admin")["indices"] for n in grant["names"]]
    return any(re.fullmatch(n[1:-1], name) if n.startswith("/") else n == name for n in granted)


@given(
    first=ALIASES,
    second=st.one_of(ALIASES, st.tuples(ALIASES, SUFFIXES)),
    moment=MOMENTS,
)
@example(first="nc-h", second="nc-h-tombstones", moment=datetime(2026, 7, 1))
@example(first="ev", second="ev-2026", moment=datetime(2026, 7, 1))
def test_two_accepted_aliases_never_claim_each_others_names(first, second, moment):
    if isinstance(second, tuple):  # often one alias's name followed by a dash and more
        second = f"{first}-{second[1]}"
    assume(first != second)
    assume(shared_names(first) is None and shared_names(second) is None)
    for one, other in ((first, second), (second, first)):
        assert not [name for name in _names(other, moment) if _claims(one, name)]


@pytest.mark.parametrize(
    ("alias", "shared"),
    [
        ("ev-2026", "ev-2026-2026.07"),  # taken in by ev's template (ev-2*)
        ("ev-2025x", "ev-2025x-2026.07"),
        ("ev-1", "ev-1-2026.07"),
        ("ev-000001", "ev-000001"),  # ev's index of the single-index layout
        ("nc-h-tombstones", "nc-h-tombstones"),  # nc-h's tombstone index
    ],
)
def test_a_refused_alias_could_share_an_index_with_another(alias: str, shared: str):
    reason = shared_names(alias)
    assert reason is not None and alias in reason
    owner = alias.split("-")[0] if "tombstones" not in alias else "nc-h"
    assert shared in _names(alias, datetime(2026, 7, 1)) and _claims(owner, shared)


@pytest.mark.parametrize("alias", ["session-events", "ev", "t-x-abc", "team_42", "2026-ev"])
def test_names_without_a_dash_before_a_digit_are_accepted(alias: str):
    assert shared_names(alias) is None
