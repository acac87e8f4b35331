"""What can go wrong when turning texts into vectors. Each error names the next step."""

from session_recall.core.errors import ErrorKind, SessionRecallError


class EmbeddingError(SessionRecallError):
    """An embedder could not give vectors for the texts it was asked about.

    Whoever calls an embedder treats every `EmbeddingError` alike: ingestion stores the
    events without vectors (`session-recall embed` adds them later), and a
    search falls back to keywords and says so.
    """


class EmbedderUnavailable(EmbeddingError):
    """The embedder did not answer, or answered with a server error, after its retries."""

    kind = ErrorKind.UNAVAILABLE


class EmbedderRefused(EmbeddingError):
    """The embedder refused the request for a reason retrying will not fix (401, 404...)."""


class DimensionMismatch(EmbeddingError):
    """The embedder returned vectors of another length than it is configured for."""
