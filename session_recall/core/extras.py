"""The distribution's name, and how to install one of its extras: said once, so that
every hint and help text that names an extra says the same.

The distribution is `session-recall-es`. `session-recall` on the package index is an
unrelated project that ships a `session_recall` package and a `session-recall` command
of its own: installing it, or both, would replace ours. This one installs from its
checkout (`pip install -e .`).
"""

DISTRIBUTION = "session-recall-es"


def install_extra(extra: str) -> str:
    """The command that installs `extra`, run in the checkout (quoted for zsh)."""
    return f"pip install -e '.[{extra}]'"


def extra_hint(extra: str) -> str:
    """`extra`, and the command that installs it: "Install {extra_hint('local')}"."""
    return f"the `{extra}` extra of {DISTRIBUTION} (in its checkout: `{install_extra(extra)}`)"


__all__ = ["DISTRIBUTION", "extra_hint", "install_extra"]
