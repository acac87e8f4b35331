"""Errors of the indexer. Each says what happened and what to do next, and its `kind`
says whose move it is (the caller's, the operator's, or a retry's)."""

import contextlib
from http import HTTPStatus

from session_recall.core.errors import ElasticsearchUnavailable, ErrorKind, SessionRecallError


class IndexerError(SessionRecallError):
    """Base class of the indexer's errors: a refusal someone must look into."""

    kind = ErrorKind.OPERATOR


class InvalidEvent(IndexerError):
    """An event failed validation; the message names every offending field."""

    kind = ErrorKind.CALLER


class UnwritablePath(IndexerError):
    """An output file (dead letters, checkpoint) cannot be written; found before the
    run reads anything, so nothing is lost and the caller picks another path."""

    kind = ErrorKind.CALLER


class UnreadableCheckpoint(IndexerError):
    """The checkpoint file holds no position `ingest` saved: the caller names another
    or deletes it; nothing was read."""

    kind = ErrorKind.CALLER


class AliasMissing(IndexerError):
    """The alias has no write index, so a create would auto-create a stray index.

    Unavailable rather than the operator's: the events are fine, and a producer that
    retries them stores them once `setup` has run, where one told "your fault" drops them.
    """

    kind = ErrorKind.UNAVAILABLE


class WriteUnavailable(IndexerError, ElasticsearchUnavailable):
    """Elasticsearch did not take the events within the retry bound; nothing after the
    last acknowledged event may be considered stored."""

    kind = ErrorKind.UNAVAILABLE


class PrivilegeMissing(IndexerError):
    """The credential may not store some events (a 403 on an item, or on creating a
    month's partition): the events are fine, the role lacks a privilege. `ingest`
    stops there rather than dead-letter them as if they were bad, its checkpoint
    before them, and a run with a credential that holds the privilege stores them
    (nothing twice)."""


class TooManyEvents(IndexerError):
    """One request holds more events than the batcher may ever hold: sending it again
    cannot work, splitting it does."""

    kind = ErrorKind.CALLER


class Overloaded(IndexerError):
    """The sidecar holds as many pending events as it may; the caller should retry."""

    kind = ErrorKind.UNAVAILABLE


class ErasureIncomplete(IndexerError):
    """Events of an erased scope were still found after several passes; erasing is
    idempotent and the tombstone is in place, so running it again finishes the job."""

    kind = ErrorKind.UNAVAILABLE


class NativeCoreMissing(IndexerError):
    """SESSION_RECALL_NATIVE=1 asks for the native core, and it is not installed: the
    run stops rather than take the Python path behind the operator's back."""


class VectorFieldsMissing(IndexerError):
    """An index behind the alias predates the vector fields: `setup` adds them."""


class WriteFailed(IndexerError):
    """A write failed in a way that retrying the same request will not fix by itself
    (a refusal by Elasticsearch, a missing privilege, a fault of this process): the
    requests it held are answered with it, and the next write is tried afresh."""


def refusal_reason(err: BaseException) -> str:
    """What Elasticsearch said when it refused a request: its status, the error's type
    and reason (`400 validation_exception: this action would add [1] shards...`), or the
    exception's own words for anything else."""
    status = getattr(err, "status_code", None)
    body = getattr(err, "body", None)
    if isinstance(status, int) and not body:
        # An answer without a body (to a HEAD request): its status is all there is.
        with contextlib.suppress(ValueError):
            return f"{status} {HTTPStatus(status).phrase}"
    if isinstance(status, int) and isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            kind, reason = error.get("type"), error.get("reason")
            return f"{status} {kind}: {reason}" if reason else f"{status} {kind}"
        return f"{status} {error}"
    text = str(err).strip()
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
