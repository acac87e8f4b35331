"""A client seam: the real client, with some of its calls routed through a test's hook.

`Seam(client, {"delete": hook, "indices.refresh": other})`: each hook is called as
`hook(real_method, *args, **kwargs)`, so it may fail the call, hold it, or pass it
on; every other call goes straight to the client. The copies `options()` makes keep
the hooks, as the code under test makes such copies for its timeouts and retries.
"""

import functools
from collections.abc import Callable
from typing import Any

Hook = Callable[..., Any]


class Seam:
    def __init__(self, target: Any, hooks: dict[str, Hook], path: str = "") -> None:
        self._target = target
        self._hooks = hooks
        self._path = path

    def __getattr__(self, name: str) -> Any:
        path = f"{self._path}.{name}" if self._path else name
        if name == "options":
            return lambda **options: Seam(self._target.options(**options), self._hooks)
        attr = getattr(self._target, name)
        if path in self._hooks:
            return functools.partial(self._hooks[path], attr)
        if any(hooked.startswith(f"{path}.") for hooked in self._hooks):
            return Seam(attr, self._hooks, path)  # a namespace: client.indices, ...
        return attr
