"""An instant on the UTC time line, kept to the nanosecond.

Python's `datetime` stops at microseconds, and ISO strings with different fraction
lengths do not sort as text (`12:00:00Z` > `12:00:00.5Z`), so events carry an
`Instant`: integer nanoseconds since the epoch, parsed strictly and rendered the way
Java's `Instant.toString` renders it, which is what the reference tools print.
"""

import functools
import re
from datetime import UTC, datetime, timedelta
from functools import total_ordering
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import core_schema

EXPECTED_FORMAT = "2026-07-01T00:00:00Z"

# The form almost every producer writes (UTC, `T`, `Z`, a dot), its time of day in
# range: recognised by one match, its nanoseconds left to be counted when asked for
# (`nanos`). Anything else takes `_ISO`'s general path, which also names what is wrong.
_UTC = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})T(?P<time>(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d)"
    r"(?:\.(?P<fraction>\d{1,9}))?Z",
    re.ASCII,  # `\d` takes any Unicode digit ("٠") otherwise, which Elasticsearch refuses
)
# A fraction finer than the nanosecond, named as such rather than as a bad format.
_FINER = re.compile(r"\d{2}:\d{2}:\d{2}[.,]\d{10,}", re.ASCII)
# Days from which every time of day is an instant (the last one, 2262-04-11, is not).
_FIRST_DAY, _LAST_WHOLE_DAY = "1970-01-01", "2262-04-10"
_ISO = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt](?P<time>\d{2}:\d{2}:\d{2})"
    r"(?:[.,](?P<fraction>\d{1,9}))?"
    r"(?P<offset>[Zz]|[+-]\d{2}:?\d{2})",
    re.ASCII,
)
_NANOS_PER_SECOND = 1_000_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# date_nanos stores an unsigned long of nanoseconds: 1970 up to April 2262.
_MAX_NANOS = 2**63 - 1
_RANGE = "fall between 1970-01-01 and 2262-04-11 (UTC)"


def _offset_seconds(offset: str) -> int:
    """`+HHMM` or `-HHMM` in seconds east of UTC, within the bounds `%z` accepts."""
    hours, minutes = int(offset[1:3]), int(offset[3:5])
    if hours > 23 or minutes > 59:
        raise ValueError(f"offset {offset} is out of range")
    seconds = hours * 3600 + minutes * 60
    return -seconds if offset[0] == "-" else seconds


@functools.lru_cache(maxsize=4096)
def _day_seconds(date: str) -> int:
    """Seconds from the epoch to the start of `date` (YYYY-MM-DD); ValueError if no such day."""
    year, month, day = map(int, date.split("-"))
    return (datetime(year, month, day, tzinfo=UTC) - _EPOCH) // timedelta(seconds=1)


# Days seen to be whole days within range (`whole_day`): a set is cheaper to ask than
# a cached function, once per event. Bounded: there are about 107,000 such days.
_WHOLE_DAYS: set[str] = set()


def whole_day(date: str) -> bool:
    """`date` (YYYY-MM-DD) is a day of the calendar (not 2026-02-30) of which every time
    of day is an instant; remembered in `_WHOLE_DAYS` when it is."""
    if not _FIRST_DAY <= date <= _LAST_WHOLE_DAY:
        return False
    try:
        _day_seconds(date)
    except ValueError:
        return False
    _WHOLE_DAYS.add(date)
    return True


@functools.lru_cache(maxsize=4096)
def _day_text(day: int) -> str:
    """YYYY-MM-DD of the `day`-th day after the epoch."""
    return (_EPOCH + timedelta(days=day)).strftime("%Y-%m-%d")


class InvalidInstant(ValueError):
    """A value is not an ISO-8601 instant with an offset."""


@total_ordering
class Instant:
    # `_nanos` is None until asked for when parsing found the fixed-width UTC text
    # (`_elasticsearch`), which holds the same instant: most events are written and
    # never compared, so their nanoseconds are never counted.
    __slots__ = ("_elasticsearch", "_nanos")

    def __init__(self, nanos: int) -> None:
        if not 0 <= nanos <= _MAX_NANOS:
            raise InvalidInstant(f"Instants must {_RANGE}.")
        self._nanos: int | None = nanos
        self._elasticsearch: str | None = None

    @property
    def nanos(self) -> int:
        """Nanoseconds since 1970-01-01T00:00:00Z."""
        nanos = self._nanos
        if nanos is None:
            text = self._elasticsearch
            assert text is not None  # one of the two is always set
            seconds = (
                _day_seconds(text[:10])
                + int(text[11:13]) * 3600
                + int(text[14:16]) * 60
                + int(text[17:19])
            )
            nanos = self._nanos = seconds * _NANOS_PER_SECOND + int(text[20:29])
        return nanos

    @classmethod
    def parse(cls, text: str) -> "Instant":
        """Parse `2026-07-01T12:00:00.5Z` or `...+02:00`; a naive or partial value fails."""
        # Fixed positions once matched: the match's groups would cost as much as the match.
        if (
            isinstance(text, str)
            and _UTC.fullmatch(text) is not None
            and (text[:10] in _WHOLE_DAYS or whole_day(text[:10]))
        ):
            instant = object.__new__(cls)  # in range: no `__init__` check needed
            instant._nanos = None
            # `2026-07-01T12:00:00.5Z` -> `2026-07-01T12:00:00.500000000Z`
            whole = text[:-1] if len(text) > 20 else f"{text[:-1]}."
            instant._elasticsearch = f"{whole.ljust(29, '0')}Z"
            return instant
        return cls._parse_any(text)

    @classmethod
    def _parse_any(cls, text: str) -> "Instant":
        """Every accepted form, or `InvalidInstant` naming what is wrong."""
        match = _ISO.fullmatch(text.strip()) if isinstance(text, str) else None
        if match is None and isinstance(text, str) and _FINER.search(text):
            raise InvalidInstant(
                f"{text!r} has more than 9 digits after the second; an instant is kept "
                "to the nanosecond: send at most 9."
            )
        if match is None:
            raise InvalidInstant(
                f"{text!r} is not an ISO-8601 instant with a time and an offset; "
                f"expected a value like {EXPECTED_FORMAT}."
            )
        date, time, fraction_text, offset = match.groups()
        try:
            # Fields taken apart by hand (`strptime` cost a fifth of a bulk ingest's
            # CPU), and the day's seconds cached: a file's events share a few days.
            hour, minute, second = int(time[:2]), int(time[3:5]), int(time[6:])
            if hour > 23 or minute > 59 or second > 59:
                raise ValueError(f"{time} is not a time of day")
            shift = 0 if offset in ("Z", "z") else _offset_seconds(offset.replace(":", ""))
            seconds = _day_seconds(date) + hour * 3600 + minute * 60 + second - shift
        except ValueError as err:
            raise InvalidInstant(f"{text!r} is not a valid date and time: {err}.") from None
        fraction = int(fraction_text.ljust(9, "0")) if fraction_text else 0
        nanos = seconds * _NANOS_PER_SECOND + fraction
        if not 0 <= nanos <= _MAX_NANOS:
            raise InvalidInstant(f"{text!r} is out of range: instants must {_RANGE}.")
        return cls(nanos)

    @classmethod
    def from_datetime(cls, value: datetime) -> "Instant":
        if value.tzinfo is None:
            raise InvalidInstant("A datetime without a time zone is not an instant.")
        delta = value - _EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        return cls(micros * 1_000)

    @classmethod
    def clamped(cls, nanos: int) -> "Instant":
        """The instant nearest `nanos`: the first or the last there is, past either end."""
        return cls(min(max(nanos, 0), _MAX_NANOS))

    @classmethod
    def now(cls) -> "Instant":
        return cls.from_datetime(datetime.now(UTC))

    def _parts(self) -> tuple[str, int]:
        seconds, fraction = divmod(self.nanos, _NANOS_PER_SECOND)
        day, second = divmod(seconds, 86_400)
        hour, second = divmod(second, 3600)
        minute, second = divmod(second, 60)
        return f"{_day_text(day)}T{hour:02d}:{minute:02d}:{second:02d}", fraction

    def isoformat(self) -> str:
        """Java's `Instant.toString`: no fraction when zero, else 3, 6 or 9 digits."""
        whole, fraction = self._parts()
        if fraction == 0:
            return f"{whole}Z"
        digits = f"{fraction:09d}"
        for width in (3, 6):
            if digits[width:] == "0" * (9 - width):
                return f"{whole}.{digits[:width]}Z"
        return f"{whole}.{digits}Z"

    def to_elasticsearch(self) -> str:
        """A fixed-width form that `date_nanos` parses without loss."""
        text = self._elasticsearch
        if text is None:
            whole, fraction = self._parts()
            text = self._elasticsearch = f"{whole}.{fraction:09d}Z"
        return text

    def __str__(self) -> str:
        return self.isoformat()

    def __repr__(self) -> str:
        return f"Instant({self.isoformat()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and other.nanos == self.nanos

    def __lt__(self, other: "Instant") -> bool:
        return self.nanos < other.nanos

    def __hash__(self) -> int:
        return hash(self.nanos)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, _source: Any, _handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        parse = cls.parse

        def coerce(value: Any) -> "Instant":
            if isinstance(value, str):  # first: every event read from JSON has one
                return parse(value)
            if isinstance(value, Instant):
                return value
            if isinstance(value, datetime):
                return cls.from_datetime(value)
            raise InvalidInstant(f"expected an ISO-8601 instant like {EXPECTED_FORMAT}")

        return core_schema.no_info_plain_validator_function(
            coerce,
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda v: v.isoformat(), when_used="always", return_schema=core_schema.str_schema()
            ),
            json_schema_input_schema=core_schema.str_schema(),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, _schema: core_schema.CoreSchema, _handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        return {"type": "string", "format": "date-time", "examples": [EXPECTED_FORMAT]}
