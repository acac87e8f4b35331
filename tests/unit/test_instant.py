import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.core.instant import Instant, InvalidInstant


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("2026-07-01T12:00:00Z", "2026-07-01T12:00:00Z"),
        ("2026-07-01T12:00:00.5Z", "2026-07-01T12:00:00.500Z"),
        ("2026-07-01T12:00:00.000Z", "2026-07-01T12:00:00Z"),
        ("2026-07-01T12:00:00.1234Z", "2026-07-01T12:00:00.123400Z"),
        ("2026-07-01T12:00:00.123456789Z", "2026-07-01T12:00:00.123456789Z"),
        ("2026-07-01T14:00:00+02:00", "2026-07-01T12:00:00Z"),
        ("2026-07-01T07:30:00-0430", "2026-07-01T12:00:00Z"),
    ],
)
def test_instants_render_as_java_instant_to_string(text: str, rendered: str):
    assert Instant.parse(text).isoformat() == rendered


@pytest.mark.parametrize(
    "text",
    [
        "2026-07-01",
        "2026-07-01T12:00:00",
        "2026-07-01 12:00",
        "yesterday",
        "",
        "2026-02-30T00:00:00Z",
        "2026-07-01T12:00:00.1234567891Z",
        "1969-12-31T23:59:59Z",
    ],
)
def test_partial_naive_or_out_of_range_values_are_rejected(text: str):
    with pytest.raises(InvalidInstant):
        Instant.parse(text)


def test_fractions_order_by_time_not_by_text():
    values = ["2026-07-01T12:00:01Z", "2026-07-01T12:00:00.5Z", "2026-07-01T12:00:00Z"]
    assert sorted(values) != sorted(values, key=Instant.parse)
    assert [str(i) for i in sorted(map(Instant.parse, values))] == [
        "2026-07-01T12:00:00Z",
        "2026-07-01T12:00:00.500Z",
        "2026-07-01T12:00:01Z",
    ]


@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_rendering_round_trips_every_nanosecond(nanos: int):
    instant = Instant(nanos)
    assert Instant.parse(instant.isoformat()) == instant
    assert Instant.parse(instant.to_elasticsearch()) == instant


@given(
    st.integers(min_value=0, max_value=2**63 - 1),
    st.sampled_from(["Z", "z", "+00:00", "-0000", "+02:00", "-05:30"]),
    st.sampled_from(["T", "t"]),
    st.sampled_from([".", ","]),
    st.integers(min_value=0, max_value=9),
)
def test_a_parsed_text_renders_for_elasticsearch_as_its_instant_does(
    nanos: int, offset: str, separator: str, comma: str, digits: int
):
    """Parsing keeps a UTC text's fixed-width form at hand; it is the one computed."""
    shift = 0 if offset in ("Z", "z") else int(offset[1:3]) * 3600 + int(offset[-2:]) * 60
    shift = -shift if offset.startswith("-") else shift
    seconds, fraction = divmod(nanos, 10**9)
    local = Instant((seconds + shift) * 10**9) if 0 <= seconds + shift < 2**63 // 10**9 else None
    if local is None:
        return
    whole = local.to_elasticsearch()[:19].replace("T", separator)
    fraction_text = f"{fraction:09d}"[:digits]
    text = whole + (f"{comma}{fraction_text}" if digits else "") + offset
    parsed = Instant.parse(text)
    assert parsed.to_elasticsearch() == Instant(parsed.nanos).to_elasticsearch()
