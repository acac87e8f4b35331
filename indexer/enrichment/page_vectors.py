"""A page of the enrichment pass, embedded: the vectors its events lack, in a thread of
their own so that the model's time overlaps Elasticsearch's.

A text the model refuses on its own (too long for a server, say) is set apart from
the others of its page (`embeddings.embed_isolated`): it is marked as processed by the
model without a vector, with the reason (`REFUSED_FIELD`, `REFUSALS_FIELD`), so it is
neither sent again at every pass nor holds up the events after it. Any other failure
of the embedder is an outage: the page gets no vector, and says why.
"""

import atexit
import threading
import time
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from typing import Any

from session_recall.embeddings import MODELS_FIELD, Embedder, EmbeddingError, embed_isolated
from session_recall.indexer.enrichment.context_rule import Hit, Key, key, listed
from session_recall.indexer.enrichment.vector_models import REFUSALS_FIELD, REFUSED_FIELD
from session_recall.indexer.vectors import vector_fields

# A reason as the server gave it can be long; its gist is enough to act on.
_MAX_REASON = 300
# How long the process's exit waits for pages still being embedded.
EXIT_WAIT_S = 10.0

_embedding: set[threading.Thread] = set()
_embedding_lock = threading.Lock()


@dataclass(frozen=True)
class PageVectors:
    """What the model gave a page: the fields each event gains (by key), how many texts
    had nothing to embed and how many it refused; or why it gave nothing (`error`)."""

    fields: dict[Key, dict[str, Any]] = field(default_factory=dict)
    empty: int = 0
    refused: int = 0
    first_refusal: str | None = None
    error: str | None = None


def embedding(
    embedder: Embedder, hits: list[Hit], *, after: "Future[PageVectors] | None"
) -> "Future[PageVectors]":
    """`embed_page(embedder, hits)` in a daemon thread of its own, once the page `after`
    is embedded (one page at a time, so a local model never competes with itself). A
    pass that stops or fails never waits for it, nor does the process when it exits:
    a server that hangs holds nothing up."""
    future: Future[PageVectors] = Future()

    def run() -> None:
        if after is not None:
            wait([after])
        try:
            if future.set_running_or_notify_cancel():  # else cancelled before it started
                future.set_result(embed_page(embedder, hits))
        finally:
            with _embedding_lock:
                _embedding.discard(thread)

    thread = threading.Thread(target=run, name="session-recall-embed", daemon=True)
    with _embedding_lock:
        _embedding.add(thread)
    thread.start()
    return future


@atexit.register
def wait_for_pages(timeout_s: float = EXIT_WAIT_S) -> None:
    """At the process's exit, let the pages being embedded finish (for up to
    `timeout_s` in all): a daemon thread stopped inside a local model's native code as
    the interpreter ends takes the process down with it ("terminate called without an
    active exception"), after the application's work is done."""
    ends = time.monotonic() + timeout_s
    with _embedding_lock:
        running = list(_embedding)
    for thread in running:
        thread.join(timeout=max(ends - time.monotonic(), 0))


def embed_page(embedder: Embedder, hits: list[Hit]) -> PageVectors:
    """The vectors `hits` lack, as the fields each event gains. Never raises: any
    failure of the embedder (a server down, a model not installed, a bug in it) is
    the page's `error`, and the pass goes on with stems and context."""
    model = embedder.model_id
    lacking = [hit for hit in hits if model not in listed(hit, MODELS_FIELD)]
    if not lacking:
        return PageVectors()
    try:
        isolated = embed_isolated(embedder, [hit["_source"].get("text", "") for hit in lacking])
    except EmbeddingError as err:
        return PageVectors(error=err.message)
    except Exception as err:  # an embedder is code of its own: whatever it raises is an outage
        return PageVectors(error=f"{type(err).__name__}: {err}")
    fields: dict[Key, dict[str, Any]] = {}
    empty = 0
    for i, hit in enumerate(lacking):
        vector = None if i in isolated.refused else isolated.vectors[i]
        doc = vector_fields(embedder, vector)
        doc[MODELS_FIELD] = sorted({*listed(hit, MODELS_FIELD), model})
        if i in isolated.refused:
            doc[REFUSED_FIELD] = sorted({*listed(hit, REFUSED_FIELD), model})
            doc[REFUSALS_FIELD] = {
                **(hit["_source"].get(REFUSALS_FIELD) or {}),
                model: isolated.refused[i][:_MAX_REASON],
            }
        else:
            empty += vector is None
        fields[key(hit)] = doc
    first = next(iter(isolated.refused.values()), None)
    return PageVectors(fields, empty, len(isolated.refused), first)
