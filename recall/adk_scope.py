"""ADK's memory scope, `(app_name, user_id)`, as one user id of ours.

`app/user`, each part with `%` written `%25` and `/` written `%2F`: readable in
`session-recall sessions` and the other reads, and no two pairs share one (app "a/b"
with user "c" is `a%2Fb/c`, app "a" with user "b/c" is `a/b%2Fc`). The CLI and HTTP
reach an ADK memory by that id.
"""

from session_recall.core.limits import MAX_ID_CHARS
from session_recall.recall.errors import InvalidScope


def _escaped(part: str) -> str:
    return part.replace("%", "%25").replace("/", "%2F")


def memory_user(app_name: str, user_id: str) -> str:
    """The user id of ours that holds the memory of `user_id` in `app_name`."""
    for name, value in (("app_name", app_name), ("user_id", user_id)):
        if not isinstance(value, str) or not value.strip():
            raise InvalidScope(f"The ADK {name} must be a non-empty string.")
    mapped = f"{_escaped(app_name)}/{_escaped(user_id)}"
    if len(mapped) > MAX_ID_CHARS:
        raise InvalidScope(
            f"The ADK app_name and user_id make a user id of {len(mapped)} characters, "
            f"over the limit of {MAX_ID_CHARS}.",
            hint="Use shorter app names or user ids.",
        )
    return mapped
