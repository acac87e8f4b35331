"""From raw input (an NDJSON line, a decoded JSON value) to an `Event` or a reason.

Every refusal is a short sentence naming the field, because it ends up in a
dead-letter file or an HTTP answer that a person (or a model) has to act on.
"""

import functools
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from session_recall.core import strict_json
from session_recall.core.limits import MAX_ID_CHARS
from session_recall.indexer.event import (
    CONTEXT_MAX_TEXT_BYTES,
    DEFAULT_MAX_TEXT_BYTES,
    ID_TOO_LONG,
    Event,
)

_FIELDS = {name: field.alias or name for name, field in Event.model_fields.items()}
_BY_ALIAS = {alias: name for name, alias in _FIELDS.items()}
_EXPECTED = ", ".join(_FIELDS) + " (or their camelCase forms)"


class EventLimits(BaseModel):
    """Bounds an event must respect before it is sent."""

    max_text_bytes: int = Field(default=DEFAULT_MAX_TEXT_BYTES, ge=1)


_validate = Event.__pydantic_validator__.validate_python


@functools.lru_cache(maxsize=16)
def _context(max_text_bytes: int) -> dict[str, int]:
    """The validation context for a limit, made once: never modified, it is shared."""
    return {CONTEXT_MAX_TEXT_BYTES: max_text_bytes}


_DEFAULT_CONTEXT = _context(DEFAULT_MAX_TEXT_BYTES)


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
    if not isinstance(value, dict):
        return Rejected(value, f"an event must be a JSON object, not {_json_type(value)}")
    context = _DEFAULT_CONTEXT if limits is None else _context(limits.max_text_bytes)
    try:
        # The validator itself: `Event.model_validate` adds a Python call per event.
        event = _validate(value, context=context)
    except ValidationError as err:
        return Rejected(value, explain(err))
    return Parsed(event, value)


def parse_line(data: bytes, limits: EventLimits | None = None) -> Parsed | Rejected | None:
    """One NDJSON line; None for a blank line, which is not an event. A key given twice
    is refused, and a leading byte order mark skipped (`strict_json`)."""
    if not data.strip():
        return None
    try:
        value = strict_json.loads(data)
    except strict_json.InvalidJson as err:
        text = data.decode("utf-8", "replace")
        return Rejected(text, f"not valid JSON: {err}")
    return parse_object(value, limits)


def explain(err: ValidationError) -> str:
    """All of a validation error's problems as one line, with field names as sent."""
    problems = []
    for error in err.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "event"
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
        else:
            message = str(error["msg"]).removeprefix("Value error, ").rstrip(".")
            problems.append(f"{_BY_ALIAS.get(where, where)}: {message}")
    return "; ".join(problems)


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
