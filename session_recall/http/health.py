"""Probes: `/healthz` says the process serves; `/readyz` says it can store events
(Elasticsearch answers, the alias exists, and the last write did not fail). Partitions
Elasticsearch refused to create are listed (`degraded`): events of other periods are
still stored, so the sidecar stays ready. `enrichment_pending` is the enrichment's
lag: how many stored events await their stems, context and vector (they are found by
their own words meanwhile); `embedder_refused` counts the texts the model refused (kept
without a vector), `embedder_error` says why vectors are not being made. An enricher
that cannot work at all (its embedder failed to start, say) makes it not ready.
`/readyz` runs in a lane of its own (`lanes.probes`): busy searches or writes never
make it late."""

from elasticsearch import ApiError, TransportError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from session_recall.core.errors import ElasticsearchUnavailable
from session_recall.http.app import RouteGroup, Services, WriteHealth


def health_group(services: Services) -> RouteGroup:
    lane = services.lanes.probes
    alias = services.settings.index

    async def healthz(_request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def readyz(_request: Request) -> JSONResponse:
        try:
            exists = await lane.run(
                lambda: bool(lane.client.indices.exists_alias(name=alias)), what="answer"
            )
        except (ApiError, TransportError) as err:
            reason = f"Elasticsearch does not answer: {type(err).__name__}"
            return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
        except ElasticsearchUnavailable as err:  # the probe's deadline passed
            reason = err.message
            return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
        if not exists:
            reason = f"alias {alias!r} is missing; run `session-recall setup`"
            return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
        states = [check() for check in services.write_health]
        for state in states:
            if state.failing is not None:
                reason = f"writes are failing: {state.failing}"
                return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
            if state.enrichment_problem is not None:
                reason = f"enrichment cannot work: {state.enrichment_problem}"
                return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
        refused = {name: why for state in states for name, why in state.refused_partitions.items()}
        extra = _enrichment(states)
        if refused:
            return JSONResponse({"status": "degraded", "refused_partitions": refused, **extra})
        return JSONResponse({"status": "ready", **extra})

    def _enrichment(states: list[WriteHealth]) -> dict[str, object]:
        lag = [s.enrichment_pending for s in states if s.enrichment_pending is not None]
        extra: dict[str, object] = {"enrichment_pending": sum(lag)} if lag else {}
        if texts := sum(s.enrichment_refused for s in states):
            extra["embedder_refused"] = texts
        if errors := [s.embedder_error for s in states if s.embedder_error]:
            extra["embedder_error"] = errors[0]
        return extra

    probe = {"responses": {"200": {"description": "OK"}, "503": {"description": "Not ready"}}}
    return RouteGroup(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
        ],
        paths={
            "/healthz": {"get": {"summary": "The process serves", **probe}},
            "/readyz": {"get": {"summary": "Elasticsearch answers and the alias exists", **probe}},
        },
        open_paths=frozenset({"/healthz", "/readyz"}),
    )
