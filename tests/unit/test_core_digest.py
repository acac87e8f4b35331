"""Ids and cursor bindings are digests of JSON values: the fast encoder must write the
reference bytes, the standard library's."""

import json

from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.digest import canonical, digest

_scalars = st.none() | st.integers(0, 2**63 - 1) | st.text()
_parts = st.lists(_scalars, max_size=8)
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner)
)


@given(_values)
def test_canonical_is_the_standard_librarys_compact_sorted_json(value):
    reference = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    assert canonical(value) == reference.encode("utf-8", "surrogatepass")


@given(_parts, _parts)
def test_digests_are_equal_only_for_equal_values(a, b):
    assert (digest(a) == digest(b)) == (a == b)


def test_lone_surrogates_still_have_an_id():
    assert digest(["\ud800"]) != digest(["\ud801"])


def test_a_tuple_and_its_list_give_one_digest():
    assert digest(("a", 1, None)) == digest(["a", 1, None])
