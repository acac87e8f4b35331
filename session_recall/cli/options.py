"""Flags that stand for a library setting: left unset, the library's default applies.

The default and the bounds are written once, in the library's model; `--help` shows
that default, and a value out of bounds is a usage error that names the flag.
"""

import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click
from pydantic import BaseModel, ValidationError

from session_recall.http.limits import ServeLimits, envvar

M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])


def library_option(
    flag: str, model: type[BaseModel], field: str, help: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    default = model.model_fields[field].default
    return click.option(flag, type=int, default=None, show_default=str(default), help=help)


def page_size_option(default: int, help: str) -> Callable[[F], F]:
    """`--page-size` of a pass over the stored events (the backfill, the move)."""
    return click.option(
        "--page-size", type=click.IntRange(1, 10_000), default=default, show_default=True,
        help=help,
    )  # fmt: skip


def build(model: type[M], flags: Mapping[str, tuple[str, Any]]) -> M:
    """`model` from the flags that were given: `{field: (flag, value)}`."""
    given = {field: value for field, (_option, value) in flags.items() if value is not None}
    try:
        return model(**given)
    except ValidationError as err:
        problem = err.errors(include_input=False, include_url=False)[0]
        message = str(problem["msg"]).removeprefix("Value error, ")
        if not problem["loc"]:  # a rule between fields: each named by its flag
            for field, (option, _value) in flags.items():
                message = re.sub(rf"\b{field}\b", option, message)
            raise click.UsageError(message) from None
        option = flags[str(problem["loc"][0])][0]
        raise click.BadParameter(message, param_hint=option) from None


def flag(field: str) -> str:
    """The flag of a model's field: `--max-body-bytes` for `max_body_bytes`."""
    return f"--{field.replace('_', '-')}"


def limit_options(*names: str) -> Callable[[F], F]:
    """A flag per field of `ServeLimits` (`--write-deadline`), or per field in `names`,
    each with its variable (`SESSION_RECALL_WRITE_DEADLINE`), default and help from
    the model."""

    def decorate(func: F) -> F:
        for name, field in reversed(ServeLimits.model_fields.items()):
            if names and name not in names:
                continue
            # A tuple: the flag once per value (the variable: values separated by spaces).
            many = field.annotation == tuple[str, ...]
            kind: Any = click.FloatRange(min=0, min_open=True) if field.annotation is float else int
            func = click.option(
                flag(name),
                name,
                type=str if many else kind,
                multiple=many,
                default=field.default,
                show_default=not many,
                envvar=envvar(name),
                show_envvar=True,
                help=field.description,
            )(func)
        return func

    return decorate
