"""`GET /metrics`: the process's metrics in Prometheus's text format (or OpenMetrics,
when the scraper asks for it), written by `prometheus-client`.

Open to the same callers as `/readyz` by default; `protected` puts it behind the
operator token (a token bound to one user never reaches it: the metrics are every
user's). Each scrape asks Elasticsearch whether it answers, as `/readyz` does, in the
probes' lane, for `session_recall_elasticsearch_up`.
"""

from elasticsearch import ApiError, TransportError
from prometheus_client.exposition import choose_encoder
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from session_recall.core.errors import ElasticsearchUnavailable
from session_recall.http.services import RouteGroup, Services

PATH = "/metrics"


def metrics_group(services: Services, *, protected: bool = False) -> RouteGroup:
    metrics = services.metrics
    if metrics is None:
        raise ValueError("metrics_group needs Services.metrics")
    lane = services.lanes.probes
    alias = services.settings.index

    async def scrape(request: Request) -> Response:
        try:
            await lane.run(lambda: lane.client.indices.exists_alias(name=alias), what="answer")
            up = 1
        except (ApiError, TransportError, ElasticsearchUnavailable):
            up = 0
        metrics.elasticsearch_up.set(up)
        encode, content_type = choose_encoder(request.headers.get("accept", ""))
        return Response(encode(metrics.registry), headers={"content-type": content_type})

    return RouteGroup(
        routes=[Route(PATH, scrape, methods=["GET"])],
        paths={
            PATH: {
                "get": {
                    "summary": "Metrics in Prometheus's text format",
                    "responses": {
                        "200": {
                            "description": "The metrics",
                            "content": {"text/plain": {"schema": {"type": "string"}}},
                        }
                    },
                }
            }
        },
        open_paths=frozenset() if protected else frozenset({PATH}),
    )
