"""Options that take a secret, each with its `-file` twin: a command line is visible to
every local account (`ps`, `/proc`), so a secret never needs one. Light to import: the
group's own options use it before any command loads."""

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def secret_options(name: str, *, envvar: str, what: str, help: str) -> Callable[[F], F]:
    """`--NAME` (from `envvar`), whose help says it is a secret, then `--NAME-file FILE`
    (from `<envvar>_FILE`; `-` reads standard input) for the `what` it holds."""

    def apply(command: F) -> F:
        command = click.option(
            f"--{name}-file",
            envvar=f"{envvar}_FILE",
            show_envvar=True,
            type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
            help=f"A file that holds the {what} (- for stdin).",
        )(command)
        return click.option(
            f"--{name}",
            envvar=envvar,
            show_envvar=True,
            help=f"{help} (never printed). A secret: a command line is visible to every "
            f"local account, so prefer the variable or --{name}-file.",
        )(command)

    return apply
