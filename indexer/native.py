"""The native core, when it is installed: NDJSON lines to `_bulk` actions a chunk at a time.

`session_recall_native` (built from `native/` by the README's commands) reads whole
blocks of lines (`LineRun`) and fills a `Batch` with their create actions, the same
bytes `to_document` makes, with no Python call per event. A line it is not sure of
it declines, and the Python path (`parsing`, `Event`) judges that line: every refusal
is the Python path's, in its words, so the two paths differ in speed only. The rules
it applies are this package's own, handed over here: the event's field names, what
counts as blank, the limits, each day's partition.

Without it, or with SESSION_RECALL_NATIVE=0, everything takes the Python path;
SESSION_RECALL_NATIVE=1 asks for it, and a run stops when it is not installed.
"""

import os
import time
from collections.abc import Callable, Sequence

from session_recall.core.instant import Instant, whole_day
from session_recall.core.limits import MAX_ID_CHARS
from session_recall.core.partitions import Granularity, PartitionNames
from session_recall.indexer.document import DEFAULT_IDENTITY, LEGACY_IDENTITY, Identity
from session_recall.indexer.errors import NativeCoreMissing
from session_recall.indexer.event import WHITESPACE, Event
from session_recall.indexer.parsing import DEFAULT_LIMITS, DEFAULT_MAX_TEXT_BYTES, EventLimits

try:
    import session_recall_native as _core
except ImportError:  # not built here: the Python path does the same
    _core = None

# What `Builder.feed` stopped at (see native/src/lib.rs).
DONE, FULL, DECLINED, TOO_LONG = 0, 1, 2, 3
_OFF = frozenset({"0", "false", "no", "off"})
_ON = frozenset({"1", "true", "yes", "on"})


# A core built from older sources lacks what this release's writer asks of a batch
# (`own_scopes_of`): it is left unused until rebuilt, and the Python path does the same.
_CURRENT = _core is not None and hasattr(_core.Batch, "own_scopes_of")


def installed() -> bool:
    """The native core is installed here, built from this release's sources, whatever
    SESSION_RECALL_NATIVE says."""
    return _CURRENT


def available() -> bool:
    """Whether to take the native path: the core is installed and not turned off
    (SESSION_RECALL_NATIVE=0). Raises `NativeCoreMissing` when SESSION_RECALL_NATIVE=1
    asks for it and it is not installed (or was built from older sources); unset, the
    core is used where it is."""
    setting = os.environ.get("SESSION_RECALL_NATIVE", "").strip().lower()
    if setting in _OFF:
        return False
    if not _CURRENT and setting in _ON:
        raise NativeCoreMissing(
            "SESSION_RECALL_NATIVE=1 asks for the native core, which is not installed, or "
            "was built from older sources.",
            hint="Build it with `pip install ./native` (needs cargo), "
            "or unset SESSION_RECALL_NATIVE to take the Python path.",
        )
    return _CURRENT


# Event fields the core leaves to the Python path: a line that has one is declined.
# `payload` is any JSON, written back as the producer sent it; rare in bulk feeds.
# `truncated` is the service's own (`truncation`), on a text the core declines anyway.
PYTHON_ONLY = frozenset({"payload", "truncated"})


class Rules:
    """What the core checks, and the partitions it writes to, for one alias and one
    set of limits: made once, then a builder per input. Raises `RuntimeError` when
    the core is not `available()`."""

    def __init__(
        self,
        *,
        alias: str,
        granularity: Granularity,
        identity: Identity = DEFAULT_IDENTITY,
        limits: EventLimits | None,
    ) -> None:
        if _core is None or not available():
            raise NativeCoreMissing(
                "The native core is not available here.",
                hint="Take the Python path, or build the core with `pip install ./native`.",
            )
        keys = {}
        for name, field in Event.model_fields.items():
            if name in PYTHON_ONLY:
                continue  # a key the core does not know: it declines the line
            keys[name] = name
            keys[field.alias or name] = name
        self.limits = limits
        self._rules = _core.Rules(
            keys=keys,
            whitespace=WHITESPACE,
            max_id_chars=MAX_ID_CHARS,
            max_text_bytes=DEFAULT_MAX_TEXT_BYTES if limits is None else limits.max_text_bytes,
            default_conversation_type=Event.model_fields["conversation_type"].default,
            id_with_time=identity != LEGACY_IDENTITY,
        )
        self._day = day_partitions(alias, granularity, limits or DEFAULT_LIMITS)

    def builder(self, *, max_count: int, max_bytes: int, max_line_bytes: int) -> "_core.Builder":
        """A builder of batches of at most `max_count` actions and `max_bytes` bytes."""
        return _core.Builder(
            self._rules,
            day=self._day,
            max_count=max_count,
            max_bytes=max_bytes,
            max_line_bytes=max_line_bytes,
        )


def merged(batches: "Sequence[_core.Batch]") -> "_core.Batch":
    """One batch of the documents of `batches`, in order (see `Batch.merged`)."""
    assert _core is not None  # there are batches only where the core is
    return batches[0] if len(batches) == 1 else _core.Batch.merged(list(batches))


# A builder remembers each day's answer (native/src/lib.rs): a day taken as inside the
# window stays taken while the window's start moves on. Days this close to the start
# are left to the Python path, which asks the clock for each event, so a builder
# would have to live this long before it took an event the window refuses.
WINDOW_MARGIN_NANOS = 31 * 86_400 * 1_000_000_000


def day_partitions(
    alias: str, granularity: Granularity, limits: EventLimits = DEFAULT_LIMITS
) -> Callable[[str], tuple[str, int] | None]:
    """For a day (YYYY-MM-DD): its partition and its first second since the epoch, or
    None when not every time of that day is an instant an event may carry, or inside
    the window of accepted times (`EventLimits`) with room to spare (the core then
    declines the event, for the Python path to judge)."""
    names = PartitionNames(alias, granularity)
    day_nanos = 86_400 * 1_000_000_000

    def day(date: str) -> tuple[str, int] | None:
        if not whole_day(date):
            return None
        midnight = Instant.parse(f"{date}T00:00:00Z")
        now = time.time_ns()
        start, end = midnight.nanos, midnight.nanos + day_nanos - 1
        if limits.window_problem(start - WINDOW_MARGIN_NANOS, now) or limits.window_problem(
            end, now
        ):
            return None
        return names.index(midnight), midnight.nanos // 1_000_000_000

    return day
