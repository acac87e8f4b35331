"""Probes: `/healthz` says the process serves; `/readyz` says it can store events
(Elasticsearch answers, the alias exists, and the last write did not fail). Partitions
Elasticsearch refused to create are listed (`degraded`): events of other periods are
still stored, so the sidecar stays ready. `enrichment_pending` is the enrichment's
lag: how many stored events await their stems, context and vector (they are found by
their own words meanwhile); `embedder_refused` counts the texts the model refused (kept
without a vector), `embedder_error` says why vectors are not being made, and
`enrichment_failing` why the last pass failed (events are stored all the same). An
enricher that cannot work at all (its embedder failed to start) makes it not ready.
`/readyz` runs in a lane of its own (`lanes.probes`): busy searches or writes never
make it late."""

from elasticsearch import (
    ApiError,
    AuthenticationException,
    AuthorizationException,
    SSLError,
    TransportError,
)
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from session_recall.config import Settings
from session_recall.core.errors import ElasticsearchUnavailable
from session_recall.http.services import RouteGroup, Services, WriteHealth
from session_recall.indexer.errors import refusal_reason


def _unready(err: ApiError | TransportError, settings: Settings) -> str:
    """Why Elasticsearch's answer to the probe is no: a refusal names the credential
    the probes use (serve's read one, when set apart), never its secret."""
    if settings.read_api_key or settings.read_username:
        credential = "serve's read credential (SESSION_RECALL_READ_*)"
    else:
        credential = "serve's credential (ELASTICSEARCH_*)"
    if isinstance(err, AuthenticationException):
        return f"Elasticsearch refused {credential} (401): none, wrong or expired"
    if isinstance(err, AuthorizationException):
        return (
            f"Elasticsearch refused {credential} (403): {refusal_reason(err)}; the probes "
            "need the recall role"
        )
    if isinstance(err, SSLError):
        return "Elasticsearch's certificate is not trusted: set ELASTICSEARCH_CA_CERTS"
    return f"Elasticsearch does not answer: {type(err).__name__}"


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
            reason = _unready(err, services.settings)
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
        if failing := [s.enrichment_failing for s in states if s.enrichment_failing]:
            extra["enrichment_failing"] = failing[0]  # events are stored all the same
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
