"""An adapter imported without its framework names the extra that installs it, in
one line, where Python would say `No module named 'google'`."""

import subprocess
import sys

import pytest

# Python's own way to make a module absent: an import of it then fails as a missing one.
ABSENT = """
import sys
sys.modules[{module!r}] = None
import session_recall.integrations.{adapter}
"""


@pytest.mark.parametrize(
    ("adapter", "module", "extra"),
    [
        ("adk", "google.adk", "adk"),
        ("langchain", "langchain_core", "langchain"),
        ("openai_agents", "agents", "openai-agents"),
    ],
)
def test_an_adapter_without_its_framework_names_the_extra_to_install(adapter, module, extra):
    script = ABSENT.format(module=module, adapter=adapter)
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 1
    last = ran.stderr.strip().splitlines()[-1]
    assert last.startswith("session_recall.integrations.extras.MissingExtra: "), ran.stderr
    assert f"the `{extra}` extra of session-recall-es" in last
    assert f"pip install -e '.[{extra}]'" in last
    assert "No module named" not in ran.stderr


def test_a_missing_extra_is_still_an_import_error_of_the_module_it_lacks():
    from session_recall.integrations.extras import MissingExtra, require

    with pytest.raises(ImportError) as missing:
        require("adk", "no_such_framework_here.sub", "No such framework")
    assert isinstance(missing.value, MissingExtra)
    assert missing.value.name == "no_such_framework_here"
