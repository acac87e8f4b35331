"""Errors of the indexer. Each says what happened and what to do next."""

from session_recall.core.errors import ElasticsearchUnavailable, SessionRecallError


class IndexerError(SessionRecallError):
    """Base class of the indexer's errors."""


class InvalidEvent(IndexerError):
    """An event failed validation; the message names every offending field."""


class AliasMissing(IndexerError):
    """The alias has no write index, so a create would auto-create a stray index."""


class WriteUnavailable(IndexerError, ElasticsearchUnavailable):
    """Elasticsearch did not take the events within the retry bound; nothing after the
    last acknowledged event may be considered stored."""


class Overloaded(IndexerError):
    """The sidecar holds as many pending events as it may; the caller should retry."""


class ErasureIncomplete(IndexerError):
    """Events of an erased scope were still found after several passes."""


class VectorFieldsMissing(IndexerError):
    """An index behind the alias predates the vector fields: `setup` adds them."""


class EmbeddingModelChanged(IndexerError):
    """The alias holds vectors of another model than the configured embedder's."""
