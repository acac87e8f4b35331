"""A flood of warnings and errors is cut to a few lines a minute, and says so."""

import logging

from session_recall.http.log_limit import WINDOW_S, RateLimit


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _record(
    message: str, level: int = logging.WARNING, name: str = "uvicorn.error"
) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, None, None)


def test_a_kind_passes_up_to_its_limit_per_window_and_the_next_window_counts_the_rest():
    clock = _Clock()
    limit = RateLimit(per_kind=3, clock=clock)
    passed = [limit.filter(_record("Invalid HTTP request received.")) for _ in range(1000)]
    assert passed.count(True) == 3

    clock.now += WINDOW_S
    record = _record("Invalid HTTP request received.")
    assert limit.filter(record)
    assert "997 more warnings and errors were not logged" in record.getMessage()


def test_kinds_are_limited_apart_and_in_all():
    limit = RateLimit(per_kind=2, clock=_Clock())
    assert [limit.filter(_record("a")) for _ in range(3)] == [True, True, False]
    assert limit.filter(_record("b"))
    distinct = [limit.filter(_record(f"unique {i}")) for i in range(100)]
    assert distinct.count(True) == 2 * 10 - 3, "all kinds together are capped too"


def test_records_below_warning_pass_untouched():
    limit = RateLimit(per_kind=1, clock=_Clock())
    assert all(limit.filter(_record("GET /readyz", logging.INFO)) for _ in range(100))
