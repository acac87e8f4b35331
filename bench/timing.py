"""Repeated timing and percentiles."""

import time
from collections.abc import Callable
from dataclasses import dataclass, field


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100), interpolating linearly between the closest ranks."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass
class Samples:
    """Latencies in milliseconds, with the `took` (ms) of the same calls when known."""

    latency_ms: list[float] = field(default_factory=list)
    took_ms: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.latency_ms)

    def p50(self) -> float:
        return percentile(self.latency_ms, 50)

    def p95(self) -> float:
        return percentile(self.latency_ms, 95)

    def took_p50(self) -> float | None:
        return percentile(self.took_ms, 50) if self.took_ms else None

    def overhead_p50(self) -> float | None:
        """p50 of (latency - took) per call: what happens outside Elasticsearch's clock."""
        if not self.took_ms:
            return None
        return percentile([a - b for a, b in zip(self.latency_ms, self.took_ms, strict=True)], 50)

    def summary(self) -> dict[str, float | int | None]:
        return {
            "n": self.n,
            "p50_ms": self.p50(),
            "p95_ms": self.p95(),
            "took_p50_ms": self.took_p50(),
            "overhead_p50_ms": self.overhead_p50(),
            "requests_per_call": max(self.requests) if self.requests else None,
        }


def repeat(
    call: Callable[[], object],
    *,
    reps: int,
    warmup: int = 0,
    budget_s: float | None = None,
    min_reps: int = 1,
) -> Samples:
    """Time `call` `reps` times after `warmup` untimed calls.

    With `budget_s`, stops early once the budget is spent and `min_reps` are done, so a
    slow approach bounds the run's length instead of the repetition count.
    """
    for _ in range(warmup):
        call()
    samples = Samples()
    started = time.perf_counter()
    for _ in range(reps):
        begin = time.perf_counter_ns()
        call()
        samples.latency_ms.append((time.perf_counter_ns() - begin) / 1e6)
        spent = time.perf_counter() - started
        if budget_s is not None and samples.n >= min_reps and spent > budget_s:
            break
    return samples
