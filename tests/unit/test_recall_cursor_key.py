"""The cursor key: configured, or created once in the home folder and kept."""

import stat
from concurrent.futures import ThreadPoolExecutor

import pytest

from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError
from session_recall.recall import load_cursor_key


def test_a_configured_key_is_used_as_is(tmp_path):
    settings = Settings(SESSION_RECALL_HOME=tmp_path, SESSION_RECALL_CURSOR_KEY="s" * 32)
    assert settings.signing_key() == b"s" * 32
    assert not (tmp_path / "cursor.key").exists()


def test_a_short_configured_key_is_refused(tmp_path):
    with pytest.raises(ConfigurationError, match="SESSION_RECALL_CURSOR_KEY"):
        load_cursor_key(tmp_path, "short")


def test_without_configuration_one_key_is_created_private_and_kept(tmp_path):
    key = load_cursor_key(tmp_path / "home")
    path = tmp_path / "home" / "cursor.key"
    assert len(key) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Settings(SESSION_RECALL_HOME=tmp_path / "home").signing_key() == key
    assert [p.name for p in path.parent.iterdir()] == ["cursor.key"]  # no drafts left


def test_processes_racing_to_create_the_key_agree_on_one(tmp_path):
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: load_cursor_key(tmp_path), range(32)))
    assert len(keys) == 1


def test_a_damaged_key_file_says_what_to_do(tmp_path):
    (tmp_path / "cursor.key").write_text("not a key\n")
    with pytest.raises(ConfigurationError, match="Delete it"):
        load_cursor_key(tmp_path)
