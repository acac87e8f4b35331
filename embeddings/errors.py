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
    """The embedder refused the request for a reason retrying will not fix (401, 404...).

    `of_texts`: the refusal is of what was sent (a 400, 413 or 422: a text too long, or
    one the server cannot read), not of the caller (a 401, 403 or 404: the key, the
    model): sent apart, the other texts may pass (`embed_isolated`)."""

    def __init__(self, message: str, *, hint: str | None = None, of_texts: bool = False) -> None:
        super().__init__(message, hint=hint)
        self.of_texts = of_texts


class DimensionMismatch(EmbeddingError):
    """The embedder returned vectors of another length than it is configured for."""
