"""Query strings read into a model per endpoint: a parameter the endpoint does not take,
or one given twice, is refused (400) rather than ignored or guessed at, so
`?lookback_days=5` on an endpoint without a lookback is a visible mistake, not a
silent default."""

from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from session_recall.http.errors import json_error

Options = TypeVar("Options", bound=BaseModel)


class NoOptions(BaseModel):
    """The query string of an endpoint that takes no parameter."""

    model_config = ConfigDict(extra="forbid")


def read_query(request: Request, model: type[Options]) -> Options | JSONResponse:
    """The endpoint's options, or the answer that names the offending parameter: 400
    for one the endpoint does not take or one given twice (which of the two would
    count?), 422 for a value it refuses, as for the other arguments of a request."""
    given = request.query_params.multi_items()
    names = [name for name, _ in given]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        return json_error(
            400,
            f"Query parameter {twice[0]!r} is given more than once.",
            "Give each parameter once.",
        )
    try:
        return model.model_validate(dict(given))
    except ValidationError as err:
        problem = err.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(part) for part in problem["loc"])
        taken = ", ".join(model.model_fields) or "none"
        if problem["type"] == "extra_forbidden":
            return json_error(
                400,
                f"Unknown query parameter {where!r}.",
                f"This endpoint takes: {taken}.",
            )
        allowed = _allowed_values(model, where)
        hint = f"Use {' or '.join(f'{where}={v}' for v in allowed)}." if allowed else None
        return json_error(422, f"Query parameter {where!r}: {problem['msg']}.", hint)


def _allowed_values(model: type[BaseModel], name: str) -> list[str]:
    """The values a parameter takes, when it takes a fixed few (a Literal)."""
    schema = model.model_json_schema().get("properties", {}).get(name, {})
    for option in schema.get("anyOf", [schema]):
        if "enum" in option:
            return [str(value) for value in option["enum"]]
    return []
