"""Reads the pinned Elasticsearch version from the repository's `.env`.

`.env` is the one place the version is written: docker compose interpolates it, and
the node launcher and the test fixtures read it through `elasticsearch_version()`.
"""

from functools import cache
from importlib import resources
from pathlib import Path

_CHECKOUT_ENV = Path(__file__).resolve().parent.parent / ".env"


def _read_env_text() -> str:
    if _CHECKOUT_ENV.is_file():
        return _CHECKOUT_ENV.read_text(encoding="utf-8")
    # An installed wheel carries the same file (see pyproject's force-include).
    return resources.files("session_recall").joinpath("pinned.env").read_text(encoding="utf-8")


@cache
def elasticsearch_version() -> str:
    for line in _read_env_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "ELASTICSEARCH_VERSION":
            return value.strip()
    raise RuntimeError(".env has no ELASTICSEARCH_VERSION line; restore it from git.")


def elasticsearch_major() -> int:
    return int(elasticsearch_version().split(".", 1)[0])
