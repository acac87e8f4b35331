"""Two `node start`s of one name at once, as two shells run them: the second waits for
the first and prints the same URL, rather than launching a second Elasticsearch that
exits at once ("failed to obtain node locks")."""

import os
import subprocess
import uuid
from collections.abc import Iterator

import pytest

from session_recall.node import LocalNode
from tests.support.elasticsearch import DedicatedNodes, home_for_tests

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def node() -> Iterator[LocalNode]:
    nodes = DedicatedNodes(prefix=f"t{uuid.uuid4().hex[:6]}")
    yield nodes.node("race")
    nodes.close()


def test_two_starts_at_once_both_print_the_url_of_one_node(node: LocalNode):
    command = ["session-recall", "--home", str(home_for_tests()), "node", "start"]
    starts = [
        subprocess.Popen(
            [*command, "--name", node.name],
            env=os.environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    done = [start.communicate(timeout=600) for start in starts]
    assert [start.returncode for start in starts] == [0, 0], done
    urls = {out.strip().splitlines()[-1] for out, _err in done}
    running = node.status()
    assert running is not None and urls == {running.url}, done
    assert any("waiting for it" in err or "Reusing the running node" in err for _o, err in done)
