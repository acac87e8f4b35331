"""A client seam that runs something of the test's own right after a given call.

It passes every call on to a real client; the first time the method named `after`
returns, `hook()` runs before its answer is handed back. A test uses it to make
something happen at an exact point of another operation: an erasure between an
enrichment pass's read of a session and its write, say.
"""

from collections.abc import Callable
from typing import Any


class HookedClient:
    def __init__(
        self, target: Any, *, after: str, hook: Callable[[], None], _fired: list[bool] | None = None
    ) -> None:
        self._target = target
        self._after = after
        self._hook = hook
        self._fired = [False] if _fired is None else _fired  # shared with `options()` copies

    @property
    def fired(self) -> bool:
        return self._fired[0]

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if name == "options":
            return lambda **options: HookedClient(
                self._target.options(**options), after=self._after, hook=self._hook,
                _fired=self._fired,
            )  # fmt: skip
        if name != self._after or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            if not self._fired[0]:
                self._fired[0] = True
                self._hook()
            return result

        return call
