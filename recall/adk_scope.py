"""ADK's memory scope, `(app_name, user_id)`, as one user id of ours.

`adk:app/user`, each part with `%` written `%25` and `/` written `%2F`: readable in
`session-recall sessions` and the other reads, and no two pairs share one (app "a/b"
with user "c" is `adk:a%2Fb/c`, app "a" with user "b/c" is `adk:a/b%2Fc`). The CLI
and HTTP reach an ADK memory by that id.

No plain user id equals one: the prefix `adk:` is the ADK scopes' own, and a caller
bound to a plain user (a token without an app) is refused an id that carries it
(`plain_user`). So the plain user `tea-shop/ana` is never ana of app tea-shop.
"""

from session_recall.core.limits import MAX_ID_CHARS
from session_recall.recall.errors import InvalidScope

# Starts every ADK scope's user id, and no plain user's.
PREFIX = "adk:"


def _escaped(part: str) -> str:
    return part.replace("%", "%25").replace("/", "%2F")


def memory_user(app_name: str, user_id: str) -> str:
    """The user id of ours that holds the memory of `user_id` in `app_name`."""
    for name, value in (("app_name", app_name), ("user_id", user_id)):
        if not isinstance(value, str) or not value.strip():
            raise InvalidScope(f"The ADK {name} must be a non-empty string.")
    mapped = f"{PREFIX}{_escaped(app_name)}/{_escaped(user_id)}"
    if len(mapped) > MAX_ID_CHARS:
        raise InvalidScope(
            f"The ADK app_name and user_id make a user id of {len(mapped)} characters, "
            f"over the limit of {MAX_ID_CHARS}.",
            hint="Use shorter app names or user ids.",
        )
    return mapped


def plain_user(user_id: str) -> str:
    """`user_id` as the id of a plain user (not an ADK app's): refused when it has the
    form of an ADK scope, which a plain user must never reach."""
    if user_id.startswith(PREFIX):
        raise InvalidScope(
            f"A user id that starts with {PREFIX!r} is an ADK app's user, not a plain one.",
            hint="Name the ADK app and its user (a token's app claim, `--app`) instead.",
        )
    return user_id
