"""Every operation of serve's OpenAPI document as a request for one user, so that the
token tests cover each route, a new one included: a route this module cannot name a
user in fails them until it learns how."""

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from session_recall.core.kept_memories import memory_id
from session_recall.security.tokens import Action
from tests.support.ndjson import event

# Reachable without any token: the probes and the document.
OPEN = frozenset({"/healthz", "/readyz", "/openapi.json"})
# Operations whose users are named in the body, not the path.
BODY_USERS = frozenset({("post", "/v1/events")})
# A value for every path parameter but the user's.
PATH_VALUES = {"session": "s-tok", "contact": "c-tok", "inbox": "i-tok"}
TOOL_ARGUMENTS = {"innerThought": "recap", "query": "weather"}
# recall_memories answers from the memories, which the requests save only later: its
# turns (the events' text) are what it finds of the user's before then.
EXTRA_ARGUMENTS = {"/v1/users/{user}/tools/recall_memories": {"turns": 3}}
MEMORIES = "/v1/users/{user}/memories"
RETIRE = "/v1/users/{user}/memories/{memory}/retire"


def saved_memory(user: str) -> dict[str, Any]:
    """The memory the requests save for `user`, from the first event `_event` makes."""
    return {"statement": "the weather matters", "kind": "fact", "sources": [f"e-tok-{user}-0"]}


def _memory_id(user: str) -> str:
    memory = saved_memory(user)
    return memory_id(user, memory["kind"], memory["statement"], memory["sources"])


@dataclass(frozen=True)
class Operation:
    method: str  # lowercase, as in the document
    path: str  # the template

    @property
    def id(self) -> str:
        return f"{self.method.upper()} {self.path}"

    def needs(self) -> Action:
        """The action the route should need, by what it does (not by what serve says)."""
        if self.method == "delete":
            return Action.ERASE
        if (self.method, self.path) in BODY_USERS:
            return Action.WRITE
        if self.method == "post" and self.path in (MEMORIES, RETIRE):
            return Action.WRITE  # saving and retiring a memory
        if self.method == "get" or "/tools/" in self.path:
            return Action.READ
        raise AssertionError(f"{self.id}: say which action it needs in tests/support")

    def request(self, user: str, *, body_users: tuple[str, ...] = ()) -> "Request":
        """The operation for `user`: in the path, or in the body (every user of
        `body_users` there, in that order, when given)."""
        # An event of the user's own, as the operations' seed stores it (`_event`).
        values = {**PATH_VALUES, "user": user, "event": f"e-tok-{user}-1",
                  "memory": _memory_id(user)}  # fmt: skip
        parts = []
        for part in self.path.split("/"):
            if part.startswith("{"):
                name = part[1:-1]
                assert name in values, f"{self.id}: no test value for {{{name}}}"
                part = values[name]
            parts.append(part)
        url = "/".join(parts)
        if (self.method, self.path) in BODY_USERS:
            users = body_users or (user,)
            events = [_event(i, who) for i, who in enumerate(users)]
            return Request(self.method, f"{url}?refresh=wait_for", json=events)
        assert "{user}" in self.path, f"{self.id}: names no user; add it to BODY_USERS"
        if self.path == MEMORIES:
            if self.method == "post":
                return Request(self.method, url, json=saved_memory(user))
            return Request(self.method, f"{url}?q=weather&include_superseded=true")
        if self.path == RETIRE:
            return Request(self.method, url, json={"reason": "tested"})
        if self.path.endswith("/cross_conversation_search"):
            url += "?enabled=true"  # off unless the application turns it on
        arguments = TOOL_ARGUMENTS | EXTRA_ARGUMENTS.get(self.path, {})
        return Request(self.method, url, json=arguments if self.method == "post" else None)


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    def ndjson(self) -> "Request":
        """The same events as NDJSON."""
        body = b"".join(orjson.dumps(item) + b"\n" for item in self.json)
        return Request(self.method, self.url, body, {"content-type": "application/x-ndjson"})

    def send(self, client: Any, token: str | None) -> Any:
        headers = {**self.headers}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if isinstance(self.json, bytes):
            return client.request(self.method, self.url, content=self.json, headers=headers)
        return client.request(self.method, self.url, json=self.json, headers=headers)


def _event(i: int, user: str) -> dict[str, Any]:
    """Event `i` of `user`, of today (cross-conversation search looks back 90 days)."""
    made = event(i, user=user, session=PATH_VALUES["session"])
    stamp = datetime.now(UTC).replace(hour=0, minute=0, second=i, microsecond=0)
    return {
        **made,
        "event_id": f"e-tok-{user}-{i}",
        "timestamp": stamp.isoformat().replace("+00:00", "Z"),
        "contact_id": "c-tok",
        "inbox_id": "i-tok",
    }


def operations(document: dict[str, Any]) -> list[Operation]:
    """Every operation of the document that takes a token."""
    found = [
        Operation(method, path)
        for path, item in document["paths"].items()
        if path not in OPEN
        for method in item
    ]
    assert found, "the document lists no operation"
    return sorted(found, key=lambda op: (op.method == "delete", op.path, op.method))
