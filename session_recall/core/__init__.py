"""The shared core: what both libraries and every adapter speak (instants, the base
error and its kinds, digests, strict JSON, the bounds on ids). Imports nothing else of
ours."""

from session_recall.core.digest import canonical, digest
from session_recall.core.errors import (
    ConfigurationError,
    ElasticsearchUnavailable,
    ErrorKind,
    SessionRecallError,
)
from session_recall.core.instant import EXPECTED_FORMAT, Instant, InvalidInstant

__all__ = [
    "EXPECTED_FORMAT",
    "ConfigurationError",
    "ElasticsearchUnavailable",
    "ErrorKind",
    "Instant",
    "InvalidInstant",
    "SessionRecallError",
    "ShardsUnavailable",
    "canonical",
    "digest",
]
