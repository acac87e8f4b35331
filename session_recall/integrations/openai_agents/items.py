"""The SDK's items as our events and back. Pure: no request.

An item (a message, a function call and its output, a reasoning item...) is a JSON
object the SDK must get back unchanged, so it is the event's `payload`; the event's
`text` is what recall searches: a message's text parts, a tool call's name and
arguments, a tool output, a reasoning summary. An event stored by another surface
(no payload) comes back as a message of its role.
"""

from typing import Any

from session_recall.core.instant import Instant
from session_recall.indexer import Event

# Event types by the item's role, or by its type when it has no role.
_ROLES = {"user": "user_message", "assistant": "assistant_message"}
_TYPES = {
    "function_call": "tool_call",
    "function_call_output": "tool_result",
    "reasoning": "reasoning",
}
_SYSTEM = "system_message"  # the system and developer roles
_BACK = {"user_message": "user", "assistant_message": "assistant", _SYSTEM: "system"}
# The searchable text's bound: within the event's 1 MB text limit whatever the script
# (4 bytes a character at most). A longer tool output is searched by its start, and
# kept whole in the payload as long as the event stays within the writer's 5 MiB
# limit: an item over it is refused, and `add_items` then stores none of its items.
MAX_TEXT_CHARS = 250_000


def item_event(item: Any, *, user_id: str, session_id: str, event_id: str, at: Instant) -> Event:
    """The event of one SDK item: its text, its type, and the item itself as payload.
    Raises `TypeError` for an item that is not a JSON object."""
    if not isinstance(item, dict):
        raise TypeError(f"an item is a JSON object, not {type(item).__name__}")
    return Event(
        user_id=user_id,
        session_id=session_id,
        event_id=event_id,
        timestamp=at,
        type=_type(item),
        text=item_text(item)[:MAX_TEXT_CHARS],
        payload=item,
    )


def stored_item(source: dict[str, Any]) -> dict[str, Any] | None:
    """The item an event's `_source` holds: its payload, or, for an event stored by
    another surface, a message of its role (None for an event that is none)."""
    payload = source.get("payload")
    if isinstance(payload, dict):
        return payload
    role = _BACK.get(source.get("type", ""))
    if role is None:
        return None
    return {"role": role, "content": source.get("text", "")}


def item_text(item: dict[str, Any]) -> str:
    """What recall searches of an item."""
    kind = item.get("type")
    if kind == "function_call":
        return f"{item.get('name', '')}({item.get('arguments', '')})"
    if kind == "function_call_output":
        return _parts(item.get("output", ""))
    if kind == "reasoning":
        return _parts(item.get("summary", [])) or _parts(item.get("content", []))
    if "content" in item:
        return _parts(item["content"])
    # Another kind (an image, a computer or MCP call): its type alone, never its data
    # (base64 or encrypted content would only add noise to search).
    return str(kind or "")


def _type(item: dict[str, Any]) -> str:
    role = item.get("role")
    if isinstance(role, str):
        return _ROLES.get(role, _SYSTEM)
    kind = item.get("type")
    return _TYPES.get(kind, "item") if isinstance(kind, str) else "item"


def _parts(content: Any) -> str:
    """A string as it is; a list of content parts as their texts, a line each."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part.get("text") or part.get("refusal") or ""
            for part in content
            if isinstance(part, dict)
        ]
        return "\n".join(text for text in texts if text)
    return ""
