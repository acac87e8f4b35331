"""The base error of the project, and the kinds of failure every adapter tells apart.

Every error says what happened and, where there is one, the next step. Its `kind`
says whose move it is; the adapters map a kind, never a class, to an exit code, an
HTTP status and a tool's text (`session_recall.error_policy`).
"""

from enum import StrEnum
from typing import ClassVar


class ErrorKind(StrEnum):
    # The request is wrong: the caller (a person, a program, a model) must change it.
    CALLER = "caller"
    # The deployment is wrong (configuration, missing privileges, a refusal retrying
    # cannot fix): someone must act before the same request can work.
    OPERATOR = "operator"
    # Elasticsearch is busy, away, or not set up yet (no alias to write to or search):
    # the same request works once it is back, so a producer keeps its events and
    # retries rather than dropping them.
    UNAVAILABLE = "unavailable"


class SessionRecallError(Exception):
    """A failure a user can act on: `str(err)` is the message, `hint` the next step."""

    kind: ClassVar[ErrorKind] = ErrorKind.OPERATOR

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}" if self.hint else self.message


class ConfigurationError(SessionRecallError):
    """The configuration is incomplete or contradictory."""

    kind = ErrorKind.OPERATOR


class ElasticsearchUnavailable(SessionRecallError):
    """Elasticsearch did not answer, or could not do the work now."""

    kind = ErrorKind.UNAVAILABLE


class ShardsUnavailable(ElasticsearchUnavailable):
    """A search could not reach every shard: answering would give a short page.
    The CLI exits 1 for it (a search that failed, worth retrying soon), not 3."""
