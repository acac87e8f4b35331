"""The unit tier runs without Elasticsearch: a unit test that asks, directly or through
another fixture, for a node of the suite's is refused before anything starts."""

from pathlib import Path

import pytest

UNIT = Path(__file__).parent
# Every fixture that needs a node depends on one of these (see tests/conftest.py).
NODE_FIXTURES = {"elasticsearch", "dedicated_nodes"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        wanted = NODE_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        if wanted and item.path.is_relative_to(UNIT):
            raise pytest.UsageError(
                f"{item.nodeid} needs {sorted(wanted)}: a test that needs Elasticsearch "
                "belongs in tests/integration."
            )
