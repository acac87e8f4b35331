"""`/metrics` of a real `serve` (and `--metrics-port` of a real `ingest --follow`), on
the real node, parsed with prometheus-client's own parser: each counter moves as
events and queries go through, a refused partition and a dead letter included; the
number of series does not grow with the users; the alert rules and the dashboard name
only metrics that exist; /metrics is open like /readyz, or behind the operator token."""

import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import yaml
from elasticsearch import Elasticsearch
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http import create_app
from session_recall.node import wait_until
from session_recall.observability.metrics import Metrics
from session_recall.security.tokens import Action, OwnTokens, UserTokens, audience_for, issue
from tests.integration.test_partition_refusals import OLD_MONTH
from tests.support.elasticsearch import REPO
from tests.support.ndjson import event, ndjson, write_ndjson
from tests.support.network import free_port
from tests.support.serve import Served, serving

pytestmark = pytest.mark.integration

Key = tuple[str, tuple[tuple[str, str], ...]]
NDJSON = {"content-type": "application/x-ndjson"}
TOOL = "/v1/users/{user}/tools/cross_session_search"
RULES_PAGE = REPO / "docs" / "operations.md"
DASHBOARD = REPO / "docs" / "grafana-dashboard.json"
_METRIC = re.compile(r"\bsession_recall_[a-z_]+")


@contextmanager
def no_new_index(es: Elasticsearch) -> Iterator[None]:
    """The cluster refuses every new index (a shard limit below the shards open, as a
    full cluster gives), for as short a time as the test needs. A limit of one, not the
    shards open now: on a node shared with other suites, an index deleted meanwhile
    would leave room for one."""
    es.cluster.put_settings(persistent={"cluster.max_shards_per_node": 1})
    try:
        yield
    finally:
        es.cluster.put_settings(persistent={"cluster.max_shards_per_node": None})


def scrape(url: str, **headers: str) -> dict[Key, float]:
    """Every sample of `url`'s metrics, by name and labels."""
    answer = httpx.get(f"{url}/metrics", headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def value(samples: dict[Key, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def moved(before: dict[Key, float], after: dict[Key, float], name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


@pytest.fixture(scope="module")
def served(es_url: str, module_alias: str, tmp_path_factory: pytest.TempPathFactory):
    with serving(es_url=es_url, alias=module_alias, folder=tmp_path_factory.mktemp("serve")) as s:
        yield s


def _recall(web: httpx.Client, user: str, query: str, path: str = TOOL, **params: str):
    url = path.replace("{user}", user)
    return web.post(url, params=params, json={"innerThought": "recap", "query": query})


def test_each_counter_moves_as_events_and_queries_go_through(served: Served, es: Elasticsearch):
    before = scrape(served.url)
    with httpx.Client(base_url=served.url, timeout=30) as web:
        first = [event(1, user="m-ana", text="the Lisbon venue is booked")]
        assert web.post("/v1/events?refresh=wait_for", json=first).status_code == 200
        assert web.post("/v1/events", json=first).status_code == 200  # already present
        invalid = [event(2, user="m-ana"), {"user_id": "m-ana", "text": "no timestamp"}]
        assert web.post("/v1/events", json=invalid).status_code == 422
        with no_new_index(es):
            old = web.post("/v1/events", json=event(3, user="m-ana", timestamp=OLD_MONTH))
            during = scrape(served.url)
        assert old.status_code == 422, old.text
        assert _recall(web, "m-ana", "Lisbon venue").status_code == 200
        memory = "/v1/users/{user}/tools/memory_search"
        assert _recall(web, "m-ana", "venue", memory, mode="keyword").status_code == 200
        wrong = web.post(memory.replace("{user}", "m-ana"), json={"innerThought": "x"})
        assert wrong.status_code == 422  # no query: the caller's error
    after = scrape(served.url)

    assert moved(before, after, "session_recall_events_received_total") == 5
    assert moved(before, after, "session_recall_events_acknowledged_total", result="indexed") == 2
    acknowledged = "session_recall_events_acknowledged_total"
    assert moved(before, after, acknowledged, result="already_present") == 1
    assert moved(before, after, "session_recall_events_refused_total", reason="invalid") == 1
    assert moved(before, after, "session_recall_events_refused_total", reason="partition") == 1
    assert value(during, "session_recall_partitions_refused") == 1
    assert moved(before, after, "session_recall_bulk_request_duration_seconds_count") >= 2
    assert value(after, "session_recall_batcher_queued_events") == 0
    requests = "session_recall_recall_requests_total"
    assert moved(before, after, requests, tool="cross_session_search", mode="keyword") == 1
    assert moved(before, after, requests, tool="memory_search", mode="keyword") == 1
    assert moved(before, after, requests, tool="memory_search", mode="hybrid") == 1
    errors = "session_recall_recall_errors_total"
    assert moved(before, after, errors, tool="memory_search", **{"class": "caller"}) == 1
    assert moved(before, after, errors, tool="cross_session_search", **{"class": "caller"}) == 0
    duration = "session_recall_recall_duration_seconds_count"
    assert moved(before, after, duration, tool="cross_session_search", mode="keyword") == 1
    assert value(after, "session_recall_elasticsearch_up") == 1
    [build] = [labels for name, labels in after if name == "session_recall_build_info"]
    assert dict(build)["encoder"] == "static" and dict(build)["version"]
    # The enrichment, in the background: its lag counted, the stored events enriched.
    assert wait_until(
        lambda: value(scrape(served.url), "session_recall_enrichment_events_total") >= 2,
        timeout=60,
    )
    enriched = scrape(served.url)
    assert value(enriched, "session_recall_enrichment_passes_total") >= 1
    assert ("session_recall_enrichment_pending", ()) in enriched


def test_the_number_of_series_does_not_grow_with_the_users(served: Served):
    """Events and queries for 10 users, then for 990 more: the same series, and no
    label value that holds a user, session or event id."""

    def traffic(users: range) -> dict[Key, float]:
        with httpx.Client(base_url=served.url, timeout=30) as web:
            events = [event(10_000 + u, user=f"c-{u}", session=f"cs-{u}") for u in users]
            for start in range(0, len(events), 250):
                body = ndjson(events[start : start + 250])
                assert web.post("/v1/events", content=body, headers=NDJSON).status_code == 200
            for u in users:  # each tool for half the users
                path = TOOL if u % 2 else "/v1/users/{user}/tools/memory_search"
                assert _recall(web, f"c-{u}", "weather", path).status_code == 200
        return scrape(served.url)

    # The enricher's first count: its lag is a series from then on, whatever the users.
    lag = ("session_recall_enrichment_pending", ())
    assert wait_until(lambda: lag in scrape(served.url), timeout=60)
    few = traffic(range(10))
    many = traffic(range(10, 1000))

    assert set(many) == set(few), set(many) ^ set(few)
    values = {v for _, labels in many for _, v in labels}
    assert not [v for v in values if re.search(r"c-\d|cs-\d|e-\d", v)]


def test_ingest_follow_serves_its_metrics_a_dead_letter_included(
    es_url: str, module_alias: str, tmp_path: Path
):
    source = write_ndjson(tmp_path / "events.ndjson", [event(20_001), event(20_002)])
    with source.open("ab") as file:
        file.write(b'{"user_id": "broken line\n')
    port = free_port()
    command = [
        "session-recall", "--es-url", es_url, "--index", module_alias, "ingest", str(source),
        "--follow", "--dead-letter", str(tmp_path / "dead.ndjson"), "--metrics-port", str(port),
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with _running(command, tmp_path / "ingest.log") as process:

        def counted() -> bool:
            try:
                samples = scrape(url)
            except httpx.HTTPError:
                return False
            return value(samples, "session_recall_events_dead_lettered_total") == 1

        assert wait_until(lambda: process.poll() is None and counted(), timeout=60)
        samples = scrape(url)
    assert value(samples, "session_recall_events_received_total") == 3
    assert value(samples, "session_recall_events_acknowledged_total", result="indexed") == 2
    assert value(samples, "session_recall_events_refused_total", reason="invalid") == 1
    assert value(samples, "session_recall_bulk_request_duration_seconds_count") >= 1
    assert ("session_recall_bulk_retries_total", ()) in samples


def test_embed_follow_serves_the_enrichments_metrics(
    es_url: str, module_alias: str, tmp_path: Path
):
    port = free_port()
    command = [
        "session-recall", "--es-url", es_url, "--index", module_alias, "embed", "--follow",
        "--metrics-port", str(port),
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def passed() -> bool:
        try:
            return value(scrape(url), "session_recall_enrichment_passes_total") >= 1
        except httpx.HTTPError:
            return False

    with _running(command, tmp_path / "embed.log") as process:
        assert wait_until(lambda: process.poll() is None and passed(), timeout=60)
        samples = scrape(url)
    assert ("session_recall_enrichment_pending", ()) in samples
    assert ("session_recall_embedder_refused_texts_total", ()) in samples
    assert value(samples, "session_recall_enrichment_failing") == 0


def _running(command: list[str], log: Path):
    class _Run:
        def __enter__(self) -> subprocess.Popen[bytes]:
            with log.open("wb") as sink:
                self.process = subprocess.Popen(command, stdout=sink, stderr=sink)
            return self.process

        def __exit__(self, *_exc: object) -> None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)

    return _Run()


def alert_rules() -> dict:
    """The rules block of the operations page's Monitoring section."""
    text = RULES_PAGE.read_text(encoding="utf-8")
    [block] = re.findall(r"```yaml\n(groups:\n.*?)```", text, re.DOTALL)
    return yaml.safe_load(block)


def _named(expressions: Iterator[str]) -> set[str]:
    """The metric names the expressions use, as a scrape shows them."""
    return {name for expr in expressions for name in _METRIC.findall(expr)}


def test_every_metric_the_alerts_and_the_dashboard_name_is_served(served: Served):
    # A series of each labelled family: an event stored and recalled, the lag counted.
    with httpx.Client(base_url=served.url, timeout=30) as web:
        stored = web.post("/v1/events?refresh=wait_for", json=event(30_001, user="d-ana"))
        assert stored.status_code == 200
        assert _recall(web, "d-ana", "weather").status_code == 200
    lag = ("session_recall_enrichment_pending", ())
    assert wait_until(lambda: lag in scrape(served.url), timeout=60)
    served_names = {name for name, _ in scrape(served.url)}
    rules = alert_rules()["groups"]
    in_rules = _named(rule["expr"] for group in rules for rule in group["rules"])
    dashboard = DASHBOARD.read_text(encoding="utf-8")
    in_dashboard = _named(iter(re.findall(r'"expr":\s*"((?:[^"\\]|\\.)*)"', dashboard)))

    assert in_rules and in_dashboard
    assert in_rules - served_names == set()
    assert in_dashboard - served_names == set()


def test_metrics_are_open_like_the_probes_or_behind_the_operator_token(settings: Settings):
    key = b"k" * 32
    tokens = UserTokens(OwnTokens(key, audience=audience_for(settings.index)), None)
    user = issue(
        key, audience=audience_for(settings.index), user="ana", actions=[Action.READ], ttl_s=60
    )

    def answers(protect: bool) -> list[int]:
        app = create_app(
            settings,
            token="operator-token",
            tokens=tokens,
            metrics=Metrics(encoder="static", model=None),
            protect_metrics=protect,
            enrich=False,
        )
        with TestClient(app) as web:
            return [
                web.get("/metrics", headers=headers).status_code
                for headers in (
                    {},
                    {"authorization": f"Bearer {user}"},
                    {"authorization": "Bearer operator-token"},
                )
            ]

    assert answers(protect=False) == [200, 200, 200]
    assert answers(protect=True) == [401, 403, 200]


def test_without_metrics_there_is_no_metrics_endpoint(settings: Settings):
    with TestClient(create_app(settings, enrich=False)) as web:
        assert web.get("/metrics").status_code == 404
        assert web.get("/healthz").headers["x-request-id"]
