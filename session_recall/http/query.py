"""Query-string options, read into the pydantic model of the endpoint: a bad or
unknown parameter is a 400 answer that names it."""

from typing import TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from session_recall.http.errors import bad_request

M = TypeVar("M", bound=BaseModel)


def query_options(model: type[M], request: Request) -> M | JSONResponse:
    """The query string as `model`, or the 400 answer to send instead."""
    try:
        return model.model_validate(dict(request.query_params))
    except ValidationError as err:
        problem = err.errors(include_input=False)[0]
        where = ".".join(str(p) for p in problem["loc"])
        return bad_request(400, f"Query parameter {where!r}: {problem['msg']}.")
