"""Project errors as HTTP answers: unavailable means 503 with Retry-After, so a
producer retries; the body says what happened and what to do."""

from starlette.responses import JSONResponse

from session_recall.core.errors import ElasticsearchUnavailable, SessionRecallError
from session_recall.indexer import AliasMissing, Overloaded

RETRY_AFTER_S = 5


def error_response(err: SessionRecallError) -> JSONResponse:
    body = {"error": err.message, "hint": err.hint}
    if isinstance(err, ElasticsearchUnavailable | Overloaded | AliasMissing):
        headers = {"Retry-After": str(RETRY_AFTER_S)}
        return JSONResponse(body, status_code=503, headers=headers)
    return JSONResponse(body, status_code=500)


def bad_request(status: int, message: str, hint: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "hint": hint}, status_code=status)
