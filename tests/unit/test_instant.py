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


def _outcome(parse, text: str) -> tuple[int, str] | str:
    try:
        instant = parse(text)
    except InvalidInstant as err:
        return f"refused: {err}"
    return instant.nanos, instant.to_elasticsearch()


@given(
    st.sampled_from(["1969", "1970", "2026", "2262", "2263", "9999"]),
    st.sampled_from(["01", "02", "04", "12", "13", "00"]),
    st.sampled_from(["01", "10", "11", "28", "29", "30", "31", "32"]),
    st.sampled_from(["00", "09", "19", "23", "24", "29"]),
    st.sampled_from(["00", "47", "59", "60"]),
    st.sampled_from(["00", "16", "17", "59", "60"]),
    st.text(alphabet="0123456789", max_size=10),
    st.sampled_from(["Z", "z", "+00:00", "", " ", "Zx"]),
)
def test_the_utc_shortcut_agrees_with_the_general_parse(
    year: str, month: str, day: str, hour: str, minute: str, second: str, digits: str, end: str
):
    """The common UTC form is recognised by a shortcut; whatever the text, the instant
    (or the refusal) is the one the general parse gives, nanoseconds counted lazily."""
    fraction = f".{digits}" if digits else ""
    text = f"{year}-{month}-{day}T{hour}:{minute}:{second}{fraction}{end}"
    assert _outcome(Instant.parse, text) == _outcome(Instant._parse_any, text)


def test_an_instant_parsed_by_the_shortcut_compares_and_hashes_by_its_nanoseconds():
    fast = Instant.parse("2262-04-10T23:59:59.999999999Z")
    assert fast == Instant(fast.nanos) and hash(fast) == hash(Instant(fast.nanos))
    assert Instant.parse("1970-01-01T00:00:00Z").nanos == 0
    assert Instant.parse("2262-04-11T23:47:16.854775807Z").nanos == 2**63 - 1


def test_clamped_keeps_an_instant_within_the_range():
    assert Instant.clamped(-5) == Instant(0)
    assert Instant.clamped(2**64) == Instant(2**63 - 1)
    assert Instant.clamped(42).nanos == 42


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("2026-07-0١T12:00:00Z", "is not an ISO-8601 instant"),  # an Arabic-Indic digit
        ("２026-07-01T12:00:00Z", "is not an ISO-8601 instant"),  # a full-width digit
        ("2026-10-01T00:00:00.123456789123Z", "more than 9 digits after the second"),
    ],
)
def test_only_ascii_digits_and_nine_fraction_digits_are_taken(text: str, words: str):
    with pytest.raises(InvalidInstant, match=words):
        Instant.parse(text)
