"""Flags that stand for a library setting: left unset, the library's default applies.

The default and the bounds are written once, in the library's model; `--help` shows
that default, and a value out of bounds is a usage error that names the flag.
"""

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def library_option(
    flag: str, model: type[BaseModel], field: str, help: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    default = model.model_fields[field].default
    return click.option(flag, type=int, default=None, show_default=str(default), help=help)


def build(model: type[M], flags: Mapping[str, tuple[str, Any]]) -> M:
    """`model` from the flags that were given: `{field: (flag, value)}`."""
    given = {field: value for field, (_flag, value) in flags.items() if value is not None}
    try:
        return model(**given)
    except ValidationError as err:
        problem = err.errors(include_input=False, include_url=False)[0]
        flag = flags[str(problem["loc"][0])][0]
        raise click.BadParameter(str(problem["msg"]), param_hint=flag) from None
