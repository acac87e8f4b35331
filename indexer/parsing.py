"""From raw input (an NDJSON line, a decoded JSON value) to an `Event` or a reason.

Every refusal is a short sentence naming the field, because it ends up in a
dead-letter file or an HTTP answer that a person (or a model) has to act on.
"""

import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from session_recall.core import strict_json
from session_recall.core.echo import ECHO_CHARS, echoed
from session_recall.core.limits import MAX_ID_CHARS
from session_recall.indexer.event import ID_TOO_LONG, Event
from session_recall.indexer.truncation import CUT_TYPES, cut

_FIELDS = {name: field.alias or name for name, field in Event.model_fields.items()}
_BY_ALIAS = {alias: name for name, alias in _FIELDS.items()}
_EXPECTED = ", ".join(_FIELDS) + " (or their camelCase forms)"


# One event is one message, not a document store: larger texts are a producer bug.
DEFAULT_MAX_TEXT_BYTES = 1_000_000
# Ten years back: a long history, in 120 monthly partitions. A day ahead: clocks and
# time zones misconfigured by hours, not a producer stamping the far future.
DEFAULT_MAX_AGE_DAYS = 3650
DEFAULT_MAX_AHEAD_S = 86_400
MAX_AGE_DAYS_LIMIT = 106_000  # about 1970 to 2262: every instant an event may carry
_NANOS_PER_SECOND = 1_000_000_000
_NANOS_PER_DAY = 86_400 * _NANOS_PER_SECOND


class EventLimits(BaseModel):
    """Bounds an event must respect before it is sent: a deployment's setting, checked
    here where input enters, not by the `Event` model (a stored event read back, say,
    is not held to today's limit).

    The window of accepted times keeps a producer's wrong clock (or a hostile one) from
    making a partition per month since 1970 and using up the cluster's shards; a
    migration of older histories widens it (`--max-age-days`)."""

    max_text_bytes: int = Field(default=DEFAULT_MAX_TEXT_BYTES, ge=1)
    truncate_types: tuple[str, ...] = Field(
        default=(),
        description="Event types whose text over the text limit is stored cut (its head "
        "and tail, and `truncated`: the size sent) rather than refused, besides "
        f"{', '.join(sorted(CUT_TYPES))}; give the flag once per type, or separate them "
        "by spaces in the variable.",
    )
    max_age_days: int = Field(
        default=DEFAULT_MAX_AGE_DAYS,
        ge=1,
        le=MAX_AGE_DAYS_LIMIT,
        description="Events stamped more than this many days before now are refused (422, "
        "or the dead-letter file); raise it to migrate older histories.",
    )
    max_ahead_seconds: int = Field(
        default=DEFAULT_MAX_AHEAD_S,
        ge=0,
        le=MAX_AGE_DAYS_LIMIT * 86_400,
        description="Events stamped more than this many seconds after now are refused.",
    )

    def cuts(self, event_type: str) -> bool:
        """Whether an event of `event_type` over the text limit is cut, not refused."""
        return event_type in CUT_TYPES or event_type in self.truncate_types

    def window_problem(self, nanos: int, now_nanos: int) -> str | None:
        """Why an event stamped at `nanos` is outside the window, or None."""
        if nanos < now_nanos - self.max_age_days * _NANOS_PER_DAY:
            return (
                f"timestamp: is more than {self.max_age_days} days before now; to store "
                "older events, raise --max-age-days (SESSION_RECALL_MAX_AGE_DAYS)"
            )
        if nanos > now_nanos + self.max_ahead_seconds * _NANOS_PER_SECOND:
            return (
                f"timestamp: is more than {self.max_ahead_seconds} s after now (is the "
                "producer's clock right?); to accept it, raise --max-ahead-seconds "
                "(SESSION_RECALL_MAX_AHEAD_SECONDS)"
            )
        return None


DEFAULT_LIMITS = EventLimits()


_validate = Event.__pydantic_validator__.validate_python


# Not frozen: made once per event, and a frozen dataclass costs three times as much
# to build (see `lines.Line`).
@dataclass(slots=True)
class Parsed:
    event: Event
    original: Any


@dataclass(slots=True)
class Rejected:
    """Input that will not be stored. `original` is what the dead-letter file keeps."""

    original: Any
    reason: str


def parse_object(value: Any, limits: EventLimits | None = None) -> Parsed | Rejected:
    """`value` as an event, or the reason it is refused. Never raises: input that
    makes a parser fail in a way it does not document is refused with what it said,
    so one odd line is dead-lettered rather than stopping a whole file."""
    try:
        return _parse_object(value, limits)
    except Exception as err:
        return Rejected(value, _unreadable(err))


def _unreadable(err: Exception) -> str:
    detail = str(err).strip()
    return f"could not be read ({type(err).__name__}{': ' + detail if detail else ''})"


def _parse_object(value: Any, limits: EventLimits | None) -> Parsed | Rejected:
    if not isinstance(value, dict):
        return Rejected(value, f"an event must be a JSON object, not {_json_type(value)}")
    limits = DEFAULT_LIMITS if limits is None else limits
    limit = limits.max_text_bytes
    try:
        # The validator itself: `Event.model_validate` adds a Python call per event.
        event = _validate(value)
    except ValidationError as err:
        problems = explain(err)
        text = value.get("text")
        if isinstance(text, str) and _over(text, limit):
            problems = f"{problems}; {_too_long(limit)}"
        return Rejected(value, problems)
    # Checked here rather than by a validator of the model's: no Python call for a
    # short text (a character is at most 4 bytes in UTF-8), which most are.
    text = event.text
    if len(text) * 4 > limit and _over(text, limit):
        if not limits.cuts(event.type):
            return Rejected(value, _too_long(limit))
        event = cut(event, limit)  # tool output: kept, cut (`truncation`)
    outside = limits.window_problem(event.timestamp.nanos, time.time_ns())
    if outside is not None:
        return Rejected(value, outside)
    return Parsed(event, value)


def _over(text: str, limit: int) -> bool:
    return len(text) * 4 > limit and len(text.encode("utf-8", "surrogatepass")) > limit


def _too_long(limit: int) -> str:
    return f"text: is over the {limit}-byte limit"


def parse_line(data: bytes, limits: EventLimits | None = None) -> Parsed | Rejected | None:
    """One NDJSON line; None for a blank line, which is not an event. A key given twice
    is refused, and a leading byte order mark skipped (`strict_json`)."""
    if not data.strip():
        return None
    try:
        value = strict_json.loads(data)
    except strict_json.InvalidJson as err:
        return Rejected(_as_received(data), f"not valid JSON: {err}")
    except Exception as err:  # see `parse_object`
        return Rejected(_as_received(data), _unreadable(err))
    return parse_object(value, limits)


@dataclass(frozen=True, slots=True)
class Undecodable:
    """A line that is not UTF-8, kept as its bytes: the dead-letter file writes them in
    base64 (`event_base64`), so that the line can be fixed and sent again."""

    data: bytes


def _as_received(data: bytes) -> str | Undecodable:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return Undecodable(data)


def explain(err: ValidationError) -> str:
    """All of a validation error's problems as one line, with field names as sent."""
    problems = []
    for error in err.errors(include_url=False):
        where = echoed(_place(error["loc"]))  # a key of any length may be named
        kind = error["type"]
        if kind == "default_factory_not_called":
            continue  # the derived id, not derived because another field is wrong
        if kind == ID_TOO_LONG:
            length = len(error["input"])
            problems.append(
                f"{_BY_ALIAS.get(where, where)}: is {length} characters long; "
                f"the limit is {MAX_ID_CHARS}"
            )
        elif kind == "extra_forbidden" and where in _FIELDS:
            problems.append(f"{where} is given twice (as {where} and {_FIELDS[where]})")
        elif kind == "extra_forbidden":
            problems.append(f"unknown field {where!r}; the fields are {_EXPECTED}")
        elif kind == "missing":
            problems.append(f"{_BY_ALIAS.get(where, where)} is required")
        elif kind == "finite_number":  # only a value built in Python holds one
            problems.append(
                f"{where} is {error['input']!r}, which JSON cannot hold (it would be "
                "stored as null); send null or a string"
            )
        else:
            message = str(error["msg"]).removeprefix("Value error, ").rstrip(".")
            given = error.get("input")
            if isinstance(given, str) and len(given) > ECHO_CHARS:
                # A validator that quotes the value it refused (an instant's): cut.
                message = message.replace(repr(given), repr(echoed(given)))
            problems.append(f"{_BY_ALIAS.get(where, where)}: {message}")
    return "; ".join(problems)


def _place(loc: tuple[int | str, ...]) -> str:
    """Where a problem is, as a reader names it: `payload.items[2].n`. Within a JSON
    value pydantic's place alternates the kind it tried (`dict`, `list`, `float`...)
    with the key or index: the kinds are left out."""
    if len(loc) > 1 and loc[0] == "payload":
        keys = loc[2::2]
        return "payload" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys)
    return ".".join(str(part) for part in loc) or "event"


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
