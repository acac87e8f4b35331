"""An alias name is checked once, by one rule, for every command, before anything is
made: `setup` refused `tenant-42` while `search`, `ingest`, `users create` and `serve`
took it (serve even made `tenant-42-leases`)."""

import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.core.index_names import ALIAS_RULE

pytestmark = pytest.mark.integration

# Every command that names an alias, with arguments it would otherwise run with.
COMMANDS = [
    ["setup"],
    ["search", "--user", "u", "weather"],
    ["memory-search", "--user", "u", "weather"],
    ["ingest", "-"],
    ["serve", "--port", "0"],
    ["users", "create", "--role", "admin", "--node", "no-such-node"],
    ["delete", "--user", "u", "--yes"],
    ["sessions", "--user", "u"],
    ["embed"],
    ["tokens", "issue", "--user", "u"],
    ["roles", "show"],
]


def _bad_names() -> list[str]:
    stem = f"t_bad_{uuid.uuid4().hex[:8]}"
    return [f"{stem}-42", f"{stem}-tombstones", f"{stem}-leases", stem + "x" * 200, stem.upper()]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_every_command_refuses_a_bad_alias_before_making_anything(
    command: list[str], es_url: str, es: Elasticsearch, tmp_path: Path
):
    for name in _bad_names():
        done = CliRunner().invoke(
            main,
            ["--index", name, *command],
            env={"ELASTICSEARCH_URL": es_url, "SESSION_RECALL_HOME": str(tmp_path)},
            input='{"event_id": "e", "user_id": "u"}\n',
        )
        assert done.exit_code == 3, (name, done.output)
        assert ALIAS_RULE in done.stderr, done.output
        assert "Traceback" not in done.output
        made = es.indices.get(index=f"{name.lower()[:60]}*", expand_wildcards="all")
        assert dict(made.body) == {}, name
        assert list(tmp_path.iterdir()) == [], name  # no key, no checkpoint


def test_the_message_names_the_option_and_the_whole_rule():
    done = CliRunner().invoke(main, ["--index", "tenant-42", "search", "--user", "u", "x"])
    assert done.exit_code == 3, done.output
    assert "'tenant-42' holds a dash followed by a digit" in done.stderr
    assert "--index" in done.stderr and "no dash before a digit" in done.stderr


def test_a_search_of_an_alias_not_set_up_says_how_to_set_that_one_up(es_url: str, tmp_path: Path):
    missing = f"t_unset_{uuid.uuid4().hex[:8]}"
    for command in (["search", "--user", "u", "x"], ["memory-search", "--user", "u", "x"]):
        done = CliRunner().invoke(
            main,
            ["--index", missing, *command],
            env={"ELASTICSEARCH_URL": es_url, "SESSION_RECALL_HOME": str(tmp_path)},
        )
        assert done.exit_code == 3, done.output
        assert f"`session-recall --index {missing} setup`" in done.stderr, done.output
