"""The least-privilege roles by name, and the next step a refusal (403) names: the
role the refused work needs. What each role grants is `session_recall.security`'s."""

from typing import Literal, get_args

Role = Literal["ingest", "recall", "enrich", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)


def role_hint(*roles: Role) -> str:
    """The next step after a refusal (403) of work that needs `roles`."""
    named = " and ".join(roles)
    return (
        f"This needs the {named} role{'s' if len(roles) > 1 else ''} of this alias "
        "(--index): use credentials "
        f"that hold {'them' if len(roles) > 1 else 'it'} (`session-recall roles show "
        f"--role {roles[0]}` prints what it grants)."
    )


# A 403 that is no privilege's: an index of the alias was blocked (`index.blocks.read`,
# say), which whoever may change its settings did. Told apart so that the message
# blames no role.
BLOCKED = "cluster_block_exception"


def blocked_hint(alias: str) -> str:
    """The next step after a search or a write refused by an index block."""
    return (
        f"No role lacks a privilege: an index behind {alias} is blocked (its "
        "index.blocks.* settings). An admin of the alias lifts it (PUT INDEX/_settings "
        '{"index.blocks.read": null}) and finds out who set it.'
    )
