"""Every HTTP error answer has one shape, `{"error": ..., "hint": ...}` (no hint when
there is none), and a project error's status comes from its kind, through the one
table (`session_recall.error_policy`): unavailable means 503 with Retry-After, so a
producer retries rather than dropping its events."""

from collections.abc import Mapping
from typing import Any

from starlette.responses import JSONResponse

from session_recall.core.errors import SessionRecallError
from session_recall.error_policy import answer


def error_response(err: SessionRecallError) -> JSONResponse:
    policy = answer(err)
    retry = {} if policy.retry_after_s is None else {"Retry-After": str(policy.retry_after_s)}
    return json_error(policy.http_status, err.message, err.hint, headers=retry)


def json_error(
    status: int,
    message: str,
    hint: str | None = None,
    *,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """A refusal the adapter decides itself (a body it cannot read, a wrong token...)."""
    body = {"error": message} if hint is None else {"error": message, "hint": hint}
    return JSONResponse(body, status_code=status, headers=headers)


# The shape as the OpenAPI document describes it.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"error": {"type": "string"}, "hint": {"type": "string"}},
    "required": ["error"],
    "additionalProperties": False,
}


def error_spec(description: str) -> dict[str, Any]:
    """An OpenAPI response whose body is the error shape."""
    return {"description": description, "content": {"application/json": {"schema": ERROR_SCHEMA}}}
