"""The one error table: every error class has a kind, every kind an answer, and the
CLI turns a kind into its exit code in one place."""

import importlib
import inspect
import pkgutil

import click
import pytest
from click.testing import CliRunner

import session_recall
from session_recall.cli.group import RecallGroup
from session_recall.core.errors import ErrorKind, SessionRecallError, ShardsUnavailable
from session_recall.error_policy import POLICY, answer, tool_text
from session_recall.indexer import AliasMissing, InvalidEvent, Overloaded, WriteUnavailable
from session_recall.recall import IndexNotFound, InvalidSince, SearchRefused
from session_recall.tools import ToolArgumentError


def _error_classes() -> set[type[SessionRecallError]]:
    for module in pkgutil.walk_packages(session_recall.__path__, "session_recall."):
        if not module.name.startswith("session_recall.mcp_server"):
            importlib.import_module(module.name)
    found: set[type[SessionRecallError]] = set()
    pending = [SessionRecallError]
    while pending:
        cls = pending.pop()
        found.add(cls)
        pending += cls.__subclasses__()
    return found


def test_every_error_class_has_a_kind_the_table_answers():
    for cls in _error_classes():
        assert inspect.isclass(cls)
        assert cls.kind in POLICY, cls


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (InvalidEvent("x"), ErrorKind.CALLER),
        (InvalidSince("x"), ErrorKind.CALLER),
        (ToolArgumentError("x"), ErrorKind.CALLER),
        (SearchRefused("x"), ErrorKind.OPERATOR),
        # Not set up: a producer keeps its events and retries, on every surface.
        (AliasMissing("x"), ErrorKind.UNAVAILABLE),
        (IndexNotFound("x"), ErrorKind.UNAVAILABLE),
        (WriteUnavailable("x"), ErrorKind.UNAVAILABLE),
        (Overloaded("x"), ErrorKind.UNAVAILABLE),
        (ShardsUnavailable("x"), ErrorKind.UNAVAILABLE),
    ],
)
def test_errors_are_classified_by_whose_move_it_is(error: SessionRecallError, kind: ErrorKind):
    assert error.kind is kind


def test_the_table_gives_exit_codes_statuses_and_retry_after():
    assert (answer(InvalidSince("x")).exit_code, answer(InvalidSince("x")).http_status) == (2, 422)
    assert (answer(SearchRefused("x")).exit_code, answer(SearchRefused("x")).http_status) == (
        3,
        500,
    )
    unavailable = answer(IndexNotFound("x"))
    assert (unavailable.exit_code, unavailable.http_status) == (3, 503)
    assert unavailable.retry_after_s and unavailable.retry_after_s > 0
    assert tool_text(InvalidSince("bad since", hint="Use Z.")) == "Error: bad since Use Z."
    incomplete = answer(ShardsUnavailable("x"))
    assert (incomplete.exit_code, incomplete.http_status) == (1, 503)
    assert incomplete.retry_after_s == unavailable.retry_after_s


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (InvalidSince("bad", hint="fix it"), 2),
        (SearchRefused("no"), 3),
        (AliasMissing("gone"), 3),
        # A search missing shards failed and is worth running again soon.
        (ShardsUnavailable("short", hint="Retry"), 1),
    ],
)
def test_the_cli_group_answers_every_error_once_by_its_kind(error: SessionRecallError, code: int):
    @click.group(cls=RecallGroup)
    def cli() -> None:
        pass

    @cli.command()
    def run() -> None:
        raise error

    result = CliRunner().invoke(cli, ["run"])
    assert result.exit_code == code, result.output
    assert result.output == f"Error: {error}\n"
    assert "Traceback" not in result.output
