"""`session-recall --version` and `--help` answer without importing the commands, the
client or the libraries (a second of imports otherwise); the list of commands that
`--help` shows says what each command's own help says."""

import subprocess
import sys

import click
import pytest

from session_recall.cli import COMMANDS, main

# What `--version` and `--help` must not import: each costs a large part of a second.
HEAVY = ("elasticsearch", "session_recall.indexer", "session_recall.recall", "numpy")


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_no_command_nor_library(flag: str):
    probe = (
        "import sys\n"
        "from session_recall.cli import main\n"
        "try:\n"
        f"    main([{flag!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_listed_summary_is_its_commands_own(name: str):
    command = main.get_command(click.Context(main), name)
    assert isinstance(command, click.Command) and command.name == name
    listed = click.Command(name, help=COMMANDS[name].summary).get_short_help_str(200)
    assert listed == command.get_short_help_str(200)
