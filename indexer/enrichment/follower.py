"""Enrichment that runs for as long as the process: pass after pass (`follow`), in a
thread of its own beside `serve` and `ingest --follow` (`Enricher`).

A pass that fails, that makes no progress, or whose embedder failed, is followed by a
pause that doubles up to a minute, so a refusal that lasts (a missing privilege, a
server down) costs a request a minute rather than a loop; it never gives up for good
(the privilege may be granted, the server may come back).
"""

import functools
import logging
import threading
import time
from collections.abc import Callable
from typing import TypedDict, Unpack

from elasticsearch import Elasticsearch

from session_recall.embeddings import Embedder
from session_recall.indexer.enrichment.calls import FOLLOW_RETRY, call
from session_recall.indexer.enrichment.passes import DEFAULT_PAGE, enrich
from session_recall.indexer.enrichment.slices import EVERYTHING, Share
from session_recall.indexer.enrichment.summary import EnrichmentSummary
from session_recall.indexer.retry import RetryPolicy

log = logging.getLogger(__name__)

# The longest wait between two passes that failed: one log line a minute at most.
_MAX_PAUSE_S = 60.0
# How often a follower checks the mapping (the fields, the model's vector field):
# partitions made meanwhile come from the template, which has them.
_CHECK_MAPPING_S = 60.0


class FollowOptions(TypedDict, total=False):
    """How a follower runs, all optional: `poll_seconds` between two passes that found
    nothing (1), `page_size` (`passes.DEFAULT_PAGE`), `policy` (`FOLLOW_RETRY`), the
    callbacks `on_pass` (after each pass), `on_progress` (after each page) and
    `on_failure` (a pass that failed), and `share`, which events it takes (all)."""

    poll_seconds: float
    page_size: int
    policy: RetryPolicy
    on_pass: Callable[[EnrichmentSummary], None] | None
    on_progress: Callable[[EnrichmentSummary], None] | None
    on_failure: Callable[[Exception], None] | None
    share: Share


def follow(
    client: Elasticsearch,
    alias: str,
    embedder: Embedder | None,
    *,
    stop: threading.Event,
    wake: threading.Event | None = None,
    **options: Unpack[FollowOptions],
) -> None:
    """Pass after pass until `stop` is set: the next pass starts when `wake` is set
    (a writer stored events) or after `poll_seconds`, at once when the last one had
    more to do, and after a growing pause when it failed or made no progress. A
    failure is logged as a warning once, and again only when it changes. `share` says
    which events it takes at each pass (`slices`); it is left when the follower stops."""
    share = options.get("share", EVERYTHING)
    try:
        _follow(client, alias, embedder, stop, wake or threading.Event(), options, share)
    finally:
        try:
            share.leave()
        except Exception as err:  # its leases lapse by themselves
            log.debug("could not give back the enrichment leases: %s", err)


def _follow(
    client: Elasticsearch,
    alias: str,
    embedder: Embedder | None,
    stop: threading.Event,
    wake: threading.Event,
    options: FollowOptions,
    share: Share,
) -> None:
    poll_seconds = options.get("poll_seconds", 1.0)
    policy = options.get("policy") or FOLLOW_RETRY
    on_pass, on_failure = options.get("on_pass"), options.get("on_failure")
    page_size = options.get("page_size", DEFAULT_PAGE)
    failures = 0
    logged: str | None = None  # the failure last warned of
    checked = -_CHECK_MAPPING_S  # when the mapping was last checked: never
    while not stop.is_set():
        wake.clear()
        check = time.monotonic() - checked >= _CHECK_MAPPING_S
        try:
            within = call(share.take, policy=policy, alias=alias, what="take a share of the work")
            summary = enrich(
                client, alias, embedder, policy=policy, stop=stop,
                on_progress=options.get("on_progress"), yield_to=wake, within=within,
                keeps=share.keeps, check_mapping=check, page_size=page_size,
            )  # fmt: skip
            if check:
                checked = time.monotonic()
        except Exception as err:  # a follower outlives any one failure
            failures += 1
            pause = min(poll_seconds * 2**failures, _MAX_PAUSE_S)
            level = logging.DEBUG if str(err) == logged else logging.WARNING
            log.log(level, "enrichment pass failed (%s); trying again in %.0f s", err, pause)
            logged = str(err)
            if on_failure is not None:
                on_failure(err)
            stop.wait(pause)
            continue
        if logged is not None:
            log.info("the enrichment pass works again")
            logged = None
        if on_pass is not None:
            on_pass(summary)
        if summary.stalled:
            failures += 1
            stop.wait(min(poll_seconds * 2**failures, _MAX_PAUSE_S))
            continue
        failures = 0
        if not summary.missing and not summary.interrupted:
            wake.wait(poll_seconds)


class Enricher:
    """`follow` in a thread of its own, for `serve` (and `ingest --follow`): started
    and stopped as a context manager, woken by `wake()` when events were stored;
    `on_pass` is called after each pass.

    What `/readyz` tells of it: `pending`, the lag (events awaiting enrichment, as last
    counted; None before the first count); `refused`, the texts its embedder refused
    since it started; `embedder_error`, the embedder's last failure (None once it
    works again); `failing`, why its last pass failed (None once one works); `problem`,
    why it cannot work at all (the embedder failed to start and has not embedded since),
    None while it works."""

    def __init__(
        self,
        client: Elasticsearch,
        alias: str,
        embedder: Embedder | None,
        **options: Unpack[FollowOptions],
    ) -> None:
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.pending: int | None = None
        self.refused = 0
        self.embedder_error: str | None = None
        self._start_error: str | None = None
        self._pass_error: str | None = None
        self._embedder = embedder
        self._on_pass = options.get("on_pass")
        self._on_progress = options.get("on_progress")
        self._on_failure = options.get("on_failure")
        # Its own callbacks keep what `/readyz` tells, then call the caller's.
        mine: FollowOptions = {
            **options,
            "on_progress": self._progress,
            "on_pass": self._passed,
            "on_failure": self._failed,
        }
        self._run_follower = functools.partial(
            follow, client, alias, embedder, stop=self._stop, wake=self._wake, **mine
        )
        self._thread = threading.Thread(
            target=self._run, name="session-recall-enricher", daemon=True
        )

    def _run(self) -> None:
        # The model loads at start, not with the first events: its memory is part of
        # the process's footprint from then on, and the first writes never wait on it.
        if self._embedder is not None:
            try:
                self._embedder.embed(["warm up"])
            except Exception as err:  # any failure: reported, and enrichment goes on
                self._start_error = self.embedder_error = f"the embedder failed to start: {err}"
                log.warning("%s; enriching without vectors until it works", self._start_error)
        self._run_follower()

    def wake(self) -> None:
        self._wake.set()

    def _progress(self, summary: EnrichmentSummary) -> None:
        self.pending = max(summary.missing - summary.done, 0)
        if self._on_progress is not None:
            self._on_progress(summary)

    @property
    def problem(self) -> str | None:
        return self._start_error

    @property
    def failing(self) -> str | None:
        return self._pass_error

    def _passed(self, summary: EnrichmentSummary) -> None:
        self.refused += summary.refused
        self._pass_error = None
        if summary.embedder_error is not None:
            self.embedder_error = summary.embedder_error
        elif summary.vectors:  # the embedder works (again)
            self.embedder_error = self._start_error = None
        if self._on_pass is not None:
            self._on_pass(summary)

    def _failed(self, err: Exception) -> None:
        self._pass_error = f"enrichment passes fail: {err}"
        if self._on_failure is not None:
            self._on_failure(err)

    def __enter__(self) -> "Enricher":
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)
