"""Lanes: each class of blocking work `serve` does against Elasticsearch gets threads
and connections of its own, and a deadline.

Recall searches, probes and erasures each run in a lane; writes run in the batcher's
own thread, with a client of their own. So a heavy search can hold a read lane's
threads and connections, never the ones events are written with, and a node that
stops answering holds a caller until the lane's deadline, no longer (then 503 with
Retry-After). Work still queued when its deadline passes is dropped, and each lane's
client gives up on a request by then too, so stuck threads do not pile up.
"""

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from elasticsearch import Elasticsearch

from session_recall.client import failover_only, make_client
from session_recall.config import Settings
from session_recall.core.errors import ElasticsearchUnavailable
from session_recall.http.limits import ServeLimits

T = TypeVar("T")

# A probe must answer before the orchestrator's own timeout, typically 1 to 5 s.
PROBE_TIMEOUT_S = 2.0
# Erasures are rare and heavy: two at a time is plenty, and leaves the node to the rest.
ERASURE_THREADS = 2
PROBE_THREADS = 2


class Lane:
    def __init__(
        self, name: str, client: Elasticsearch, *, threads: int, deadline: float, owned: bool
    ) -> None:
        self.name = name
        self.client = client
        self.deadline = deadline
        self._owned = owned
        self._threads = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)

    async def run(self, func: Callable[[], T], *, what: str) -> T:
        """`func()` in one of the lane's threads; `ElasticsearchUnavailable` when it has
        not returned within the deadline (waiting for a free thread included)."""
        # A timeout around the await, not `wait_for`, which wraps the future in a task
        # of its own per call.
        # In the request's context: its id on the lane's log lines, its span above the
        # client's (`http.observe`).
        context = contextvars.copy_context()
        future = asyncio.get_running_loop().run_in_executor(self._threads, context.run, func)
        try:
            async with asyncio.timeout(self.deadline):
                return await future
        except TimeoutError:
            raise ElasticsearchUnavailable(
                f"Elasticsearch did not {what} within the {self.deadline:g} s deadline.",
                hint="It is overloaded or not answering; retry after a few seconds.",
            ) from None

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        if self._owned:
            self.client.close()


@dataclass(frozen=True)
class Lanes:
    reads: Lane
    probes: Lane
    erasures: Lane

    @classmethod
    def build(
        cls,
        settings: Settings,
        limits: ServeLimits,
        *,
        shared: Elasticsearch | None = None,
        read_client: Elasticsearch | None = None,
    ) -> "Lanes":
        """Lanes with clients of their own (each its own connection pool), or copies of
        `shared` when one is given (tests); `read_client` replaces the reads' client.
        The reads and the probes use the read credentials, when set (`for_reads`)."""

        def lane(
            name: str,
            threads: int,
            deadline: float,
            client: Elasticsearch | None,
            settings: Settings = settings,
        ) -> Lane:
            if client is not None:
                return Lane(name, client, threads=threads, deadline=deadline, owned=False)
            if shared is not None:
                copy = shared.options(request_timeout=deadline, max_retries=0)
                return Lane(name, copy, threads=threads, deadline=deadline, owned=False)
            own = make_client(
                settings,
                request_timeout=deadline,
                connections_per_node=threads,
                **failover_only(settings),
            )
            return Lane(name, own, threads=threads, deadline=deadline, owned=True)

        reader = settings.for_reads()
        return cls(
            reads=lane(
                "reads", limits.max_concurrent_reads, limits.read_deadline, read_client, reader
            ),
            probes=lane("probes", PROBE_THREADS, PROBE_TIMEOUT_S, None, reader),
            erasures=lane("erasures", ERASURE_THREADS, limits.write_deadline, None),
        )

    def close(self) -> None:
        for lane in (self.reads, self.probes, self.erasures):
            lane.close()
