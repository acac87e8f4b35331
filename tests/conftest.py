"""Fixtures shared by both tiers. Integration fixtures start nothing until a test
asks for them, so the unit tier runs without Elasticsearch."""

import logging
import os
import re
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
from elasticsearch import Elasticsearch

from session_recall.client import check_server, make_client
from session_recall.config import Settings
from session_recall.integrations.store import stop_background_enrichment
from session_recall.templates import install, uninstall
from tests.support.elasticsearch import DedicatedNodes, Provided, provide_elasticsearch

log = logging.getLogger("tests")

# The suite runs on the static model unless a test asks for another: the default
# encoder (e5-small) costs each process a model load, and each home its weights. The
# tier marked `default_encoder`, the docs' examples and the recall measures run the
# default end to end (`SESSION_RECALL_EMBEDDER` unset or set by them).
os.environ["SESSION_RECALL_EMBEDDER"] = "static"


def _without_credentials(url: str) -> str:
    """The URL as it may be printed: user and password (if any) masked."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"***@{host}:{parts.port}" if parts.port else f"***@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


@pytest.fixture(scope="session")
def elasticsearch(request: pytest.FixtureRequest) -> Iterator[Provided]:
    with provide_elasticsearch() as provided:
        client = make_client(Settings(ELASTICSEARCH_URL=provided.url))
        version = check_server(client)
        where = _without_credentials(provided.url)
        line = f"Elasticsearch {version} at {where}, from {provided.source}"
        log.info(line)
        capture = request.config.pluginmanager.get_plugin("capturemanager")
        with capture.global_and_fixture_disabled():
            print(f"\n{line}")
        client.close()
        yield provided


@pytest.fixture(scope="session")
def es_url(elasticsearch: Provided) -> str:
    return elasticsearch.url


@pytest.fixture(scope="session")
def es(es_url: str) -> Iterator[Elasticsearch]:
    client = make_client(Settings(ELASTICSEARCH_URL=es_url))
    yield client
    client.close()


def _unique_alias(request: pytest.FixtureRequest) -> str:
    """`t-<the test's name>_<random>`, words joined by `_`: `setup` refuses a dash
    before a digit (`core.index_names`), which a parameter or the random part may hold."""
    stem = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[-30:].lstrip("_0123456789")
    return f"t-{stem}_{uuid.uuid4().hex[:8]}"


def _drop(es: Elasticsearch, alias: str) -> None:
    uninstall(es, alias)


@pytest.fixture(scope="module")
def module_alias(request: pytest.FixtureRequest, es: Elasticsearch) -> Iterator[str]:
    """An alias with templates and a write index, shared by one module's tests."""
    alias = _unique_alias(request)
    install(es, alias)
    yield alias
    _drop(es, alias)


@pytest.fixture
def alias(request: pytest.FixtureRequest, es: Elasticsearch) -> Iterator[str]:
    """An alias of the test's own, set up fresh and dropped afterwards."""
    name = _unique_alias(request)
    install(es, name)
    yield name
    _drop(es, name)


@pytest.fixture
def settings(es_url: str, alias: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings pointing at the test's alias, with a private home folder."""
    return Settings(
        ELASTICSEARCH_URL=es_url,
        SESSION_RECALL_INDEX=alias,
        SESSION_RECALL_HOME=tmp_path_factory.mktemp("home"),
    )


@pytest.fixture
def dedicated_nodes(request: pytest.FixtureRequest) -> Iterator[DedicatedNodes]:
    """Nodes of the test's own (start/stop/restart), wiped afterwards."""
    nodes = DedicatedNodes(prefix=f"t{uuid.uuid4().hex[:6]}")
    yield nodes
    nodes.close()


@pytest.fixture(autouse=True)
def _no_background_enrichment_outlives_its_test() -> Iterator[None]:
    """The adapters' stores enrich in the background from their first write; a test
    that does not close its store leaves that thread, which would keep writing to
    aliases other tests own (and use the `random` module under Hypothesis's eyes)."""
    yield
    stop_background_enrichment()
