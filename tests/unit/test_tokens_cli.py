"""`session-recall tokens issue` and the token settings: the key it signs with (apart
from the cursor key, private, made once), what it prints and writes, what it refuses."""

import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError
from session_recall.http.auth import user_tokens
from session_recall.security.tokens import Action, Grant


def _issue(home: Path, *args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(
        main, ["--home", str(home), "tokens", "issue", *args], env=env or {}, catch_exceptions=False
    )


def test_issue_prints_a_token_serve_takes_for_that_user_alone(tmp_path: Path):
    home = tmp_path / "home"
    assert user_tokens(Settings(SESSION_RECALL_HOME=home)) is None  # no key: serve takes none
    done = _issue(home, "--user", "alice", "--can", "read,write", "--ttl", "1h")
    assert done.exit_code == 0, done.output
    token = done.stdout.strip()
    key_file = home / "token.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert f"Made serve's token key, {key_file}" in done.stderr
    assert token not in done.stderr
    tokens = user_tokens(Settings(SESSION_RECALL_HOME=home))
    assert tokens is not None
    grant = tokens.verifier_for(token).verify(token)
    assert grant == Grant("alice", frozenset({Action.READ, Action.WRITE}))
    # The next token is signed with the same key, and says nothing of it.
    again = _issue(home, "--user", "bob", "--can", "erase")
    assert again.stderr == ""
    assert tokens.verifier_for(again.stdout.strip()).verify(again.stdout.strip()).user == "bob"
    # The cursor key is another key, in another file.
    assert Settings(SESSION_RECALL_HOME=home).signing_key() != key_file.read_bytes()


def test_issue_writes_the_token_to_a_file_only_its_owner_reads(tmp_path: Path):
    output = tmp_path / "alice.token"
    output.write_text("an older token\n")
    output.chmod(0o644)
    done = _issue(tmp_path / "home", "--user", "alice", "--can", "read", "--output", str(output))
    assert done.exit_code == 0, done.output
    assert done.stdout == ""
    token = output.read_text().strip()
    assert token.count(".") == 2
    assert stat.S_IMODE(output.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alice.token", "home"]  # no draft


def test_an_adk_token_names_the_app_and_the_user(tmp_path: Path):
    done = _issue(tmp_path, "--app", "tea-shop", "--user", "ana", "--can", "read")
    token = done.stdout.strip()
    tokens = user_tokens(Settings(SESSION_RECALL_HOME=tmp_path))
    assert tokens is not None
    assert tokens.verifier_for(token).verify(token).user == "adk:tea-shop/ana"


def test_a_token_for_one_alias_is_refused_by_a_serve_of_another(tmp_path: Path):
    done = _issue(tmp_path, "--user", "alice", "--can", "read")
    token = done.stdout.strip()
    tokens = user_tokens(Settings(SESSION_RECALL_HOME=tmp_path, SESSION_RECALL_INDEX="other"))
    assert tokens is not None
    with pytest.raises(Exception, match="another service"):
        tokens.verifier_for(token).verify(token)


def test_a_configured_token_key_is_used_and_no_file_is_made(tmp_path: Path):
    env = {"SESSION_RECALL_TOKEN_KEY": "t" * 32}
    done = _issue(tmp_path, "--user", "alice", "--can", "read", env=env)
    assert done.exit_code == 0, done.output
    assert not (tmp_path / "token.key").exists()
    settings = Settings(SESSION_RECALL_HOME=tmp_path, SESSION_RECALL_TOKEN_KEY="t" * 32)
    tokens = user_tokens(settings)
    assert tokens is not None
    assert tokens.verifier_for(done.stdout.strip()).verify(done.stdout.strip()).user == "alice"


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--can", "read,admin"], "'admin' is not one of read, write, erase"),
        (["--can", ","], "nothing is not one of"),
        (["--can", "read", "--ttl", "31d"], "not a duration from 1s to 30d"),
        (["--can", "read", "--ttl", "1w"], "not a duration"),
        (["--can", "read", "--ttl", "0s"], "not a duration"),
    ],
)
def test_issue_refuses_what_it_cannot_bound_as_a_usage_error(
    tmp_path: Path, args: list[str], problem: str
):
    done = _issue(tmp_path, "--user", "alice", *args)
    assert done.exit_code == 2, done.output
    assert problem in done.stderr
    assert done.stdout == ""


def test_issue_refuses_an_empty_user(tmp_path: Path):
    done = _issue(tmp_path, "--user", " ", "--can", "read")
    assert done.exit_code == 2, done.output
    assert "user must be a non-empty string" in done.stderr


@pytest.mark.parametrize(
    "values",
    [
        {"SESSION_RECALL_IDP_JWKS_URL": "https://idp.example/jwks.json"},
        {"SESSION_RECALL_IDP_ISSUER": "https://idp.example", "SESSION_RECALL_IDP_AUDIENCE": "a"},
        {"SESSION_RECALL_IDP_APP_CLAIM": "app"},
        {
            "SESSION_RECALL_IDP_JWKS_URL": "http://idp.example/jwks.json",
            "SESSION_RECALL_IDP_ISSUER": "https://idp.example",
            "SESSION_RECALL_IDP_AUDIENCE": "recall",
        },
        {
            "SESSION_RECALL_IDP_JWKS_URL": "file:///etc/jwks.json",
            "SESSION_RECALL_IDP_ISSUER": "https://idp.example",
            "SESSION_RECALL_IDP_AUDIENCE": "recall",
        },
    ],
)
def test_an_incomplete_or_cleartext_identity_provider_is_refused(values: dict[str, str]):
    with pytest.raises(ConfigurationError, match="SESSION_RECALL_IDP_"):
        Settings(**values)


def test_a_short_token_key_is_refused(tmp_path: Path):
    settings = Settings(SESSION_RECALL_HOME=tmp_path, SESSION_RECALL_TOKEN_KEY="k3y-0f-9")
    with pytest.raises(ConfigurationError, match="SESSION_RECALL_TOKEN_KEY is shorter") as err:
        settings.token_signing_key()
    assert "k3y-0f-9" not in repr(settings) + str(err.value)
