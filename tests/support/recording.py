"""A client seam that records every call made through it.

Given a client, it passes each call on, so a test can say which calls were made.
Without one, it stands in for a node that does not answer: each call is recorded and
fails with a connection error. A unit test uses that to show that something is refused
before any request, with no Elasticsearch at all.
"""

from typing import Any

from elasticsearch import ConnectionError as ESConnectionError
from elasticsearch import Elasticsearch


class RecordingClient:
    """Records the dotted name of every client method called ("search",
    "indices.exists_alias"); the copies `options()` makes record into the same list."""

    def __init__(self, target: Any = None, calls: list[str] | None = None, path: str = "") -> None:
        self._target = target
        self.calls: list[str] = [] if calls is None else calls
        self._path = path

    def __getattr__(self, name: str) -> Any:
        path = f"{self._path}.{name}" if self._path else name
        if name == "options":  # a copy with other transport options, not a request
            if self._target is None:
                return lambda **_options: self
            return lambda **options: RecordingClient(
                self._target.options(**options), self.calls, self._path
            )
        if self._target is None:
            return RecordingClient(None, self.calls, path)  # a method, or a namespace
        attr = getattr(self._target, name)
        if not callable(attr):  # a namespace: client.indices, client.cluster, ...
            return RecordingClient(attr, self.calls, path)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(path)
            result = attr(*args, **kwargs)
            if isinstance(result, Elasticsearch):
                return RecordingClient(result, self.calls)
            return result

        return call

    def __call__(self, *_args: Any, **_kwargs: Any) -> Any:
        """A method of the stand-in: recorded, and not answered."""
        self.calls.append(self._path)
        raise ESConnectionError(f"recording client: no node answers {self._path}")
