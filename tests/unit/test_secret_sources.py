"""Secrets never need a command line: each comes from its variable, from a file
(`<VARIABLE>_FILE`, or a `--...-file` option) or from standard input (`-`), and the
options that take one say in their help that a command line is no place for it."""

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError

SECRET_VARIABLES = (
    "ELASTICSEARCH_PASSWORD",
    "ELASTICSEARCH_API_KEY",
    "SESSION_RECALL_READ_PASSWORD",
    "SESSION_RECALL_READ_API_KEY",
    "SESSION_RECALL_CURSOR_KEY",
    "SESSION_RECALL_TOKEN_KEY",
    "SESSION_RECALL_EMBEDDINGS_API_KEY",
)


def _secret_file(tmp_path: Path, text: str = "s3cret-word\n") -> Path:
    path = tmp_path / "secret"
    path.write_text(text)
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("variable", SECRET_VARIABLES)
def test_every_secret_variable_has_a_file_twin(
    variable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in SECRET_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(f"{name}_FILE", raising=False)
    monkeypatch.setenv(f"{variable}_FILE", str(_secret_file(tmp_path)))
    extra = {"ELASTICSEARCH_USERNAME": "u"} if variable == "ELASTICSEARCH_PASSWORD" else {}
    if variable == "SESSION_RECALL_READ_PASSWORD":
        extra = {"SESSION_RECALL_READ_USERNAME": "u"}
    settings = Settings(**extra)  # type: ignore[arg-type]
    values = {
        name: getattr(settings, name).get_secret_value()
        for name, field in Settings.model_fields.items()
        if field.alias == variable
    }
    assert values == {next(iter(values)): "s3cret-word"}
    assert "s3cret-word" not in repr(settings)
    # Given twice, it is refused rather than one silently preferred.
    monkeypatch.setenv(variable, "other")
    with pytest.raises(ConfigurationError, match=f"Both {variable} and {variable}_FILE"):
        Settings(**extra)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("content", "says"),
    [(None, "No such file"), ("", "is empty"), ("\n\n", "is empty")],
)
def test_an_unusable_secret_file_is_named_with_its_variable(
    content: str | None, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "password"
    if content is not None:
        path.write_text(content)
    monkeypatch.setenv("ELASTICSEARCH_PASSWORD_FILE", str(path))
    result = CliRunner().invoke(main, ["--es-url", "http://127.0.0.1:1", "setup"])
    assert result.exit_code == 3
    assert "ELASTICSEARCH_PASSWORD_FILE" in result.output and says in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("command", "option"),
    [([], "--password"), ([], "--api-key"), (["serve"], "--token")],
)
def test_an_option_that_takes_a_secret_says_so_and_names_its_safe_twins(
    command: list[str], option: str
) -> None:
    result = CliRunner().invoke(main, [*command, "--help"], terminal_width=200)
    text = " ".join(result.output.split())
    assert result.exit_code == 0
    start = text.index(f"{option} ")
    help_text = text[start : start + 300]
    assert "A secret: a command line is visible to every local account" in help_text
    assert f"{option}-file" in help_text


def test_serve_takes_its_token_from_a_file_and_refuses_two(tmp_path: Path) -> None:
    path = _secret_file(tmp_path)
    env = {"SESSION_RECALL_TOKEN": None, "SESSION_RECALL_TOKEN_FILE": None}
    both = CliRunner().invoke(main, ["serve", "--token", "x", "--token-file", str(path)], env=env)
    assert both.exit_code == 2 and "Give the token once" in both.output
    missing = CliRunner().invoke(main, ["serve", "--token-file", str(tmp_path / "nope")], env=env)
    assert missing.exit_code == 3, missing.output
    assert "SESSION_RECALL_TOKEN_FILE" in missing.output and "No such file" in missing.output


def test_an_empty_variable_is_an_unset_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELASTICSEARCH_CA_CERTS", "")
    assert Settings().ca_certs is None
    assert os.environ["ELASTICSEARCH_CA_CERTS"] == ""
