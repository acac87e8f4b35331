"""Ids are digests of JSON arrays: the fast encoder must write the reference bytes."""

import json

from hypothesis import given
from hypothesis import strategies as st

from indexer.digest import canonical, digest

_parts = st.lists(st.none() | st.integers(0, 2**63 - 1) | st.text(), max_size=8).map(tuple)


@given(_parts)
def test_canonical_is_the_standard_librarys_compact_json(parts):
    reference = json.dumps(list(parts), ensure_ascii=False, separators=(",", ":"))
    assert canonical(parts) == reference.encode("utf-8", "surrogatepass")


@given(_parts, _parts)
def test_digests_are_equal_only_for_equal_tuples(a, b):
    assert (digest(*a) == digest(*b)) == (a == b)


def test_lone_surrogates_still_have_an_id():
    assert digest("\ud800") != digest("\ud801")
