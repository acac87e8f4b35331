"""mkdocs hooks of the documentation site (mkdocs.yml's `hooks:`).

The CLI page's option tables come from mkdocs-click 0.9.0, which prints an option's
`default` attribute as it finds it. From click 8.3, an option given no default holds
click's `UNSET` sentinel there, so every such option showed `Sentinel.UNSET`. Click's
own `to_info_dict()` gives the default as click documents it (`None` when unset), and
the table row is made from that (mkdocs-click's pull request 95 does the same).
"""

import copy
from typing import Any

import click
from mkdocs_click import _docs

_row = _docs._format_table_option_row


def _documented_row(option: click.Option) -> str:
    default = option.to_info_dict()["default"]
    if default is option.default:
        return _row(option)
    shown = copy.copy(option)
    shown.default = default
    return _row(shown)


def on_startup(**_: Any) -> None:
    _docs._format_table_option_row = _documented_row
