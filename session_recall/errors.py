"""The base error of the project. Every error says what happened and what to do next."""


class SessionRecallError(Exception):
    """A failure a user can act on: `str(err)` is the message, `hint` the next step."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}" if self.hint else self.message


class ConfigurationError(SessionRecallError):
    """The configuration is incomplete or contradictory."""


class ElasticsearchUnavailable(SessionRecallError):
    """Elasticsearch did not answer, or answered as a server this project cannot use."""
