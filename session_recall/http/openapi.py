"""The OpenAPI document, built from the route groups' path items and the pydantic
models they reference, so the schema cannot drift from the validation."""

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

REF = "#/components/schemas/{model}"


def ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": REF.format(model=model.__name__)}


def path_parameters(path: str) -> list[dict[str, Any]]:
    """The OpenAPI parameters of a path's `{placeholders}`, all required strings."""
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    return [
        {"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in names
    ]


def query_parameters(
    model: type[BaseModel], *, bounds: Mapping[str, Mapping[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The OpenAPI parameters of a query-string model's fields, all optional.

    Each field's schema comes from the model; `bounds` adds what the library checks
    itself (a None default means "the library's default", so the model cannot say it).
    """
    properties = model.model_json_schema()["properties"]
    parameters = []
    for name, field in model.model_fields.items():
        schema = _non_null(properties[name]) | dict((bounds or {}).get(name, {}))
        schema.pop("default", None)
        if field.default is not None:
            schema["default"] = field.default
        parameters.append({"name": name, "in": "query", "required": False, "schema": schema})
    return parameters


def _non_null(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A field's schema without its title, and without the `null` an optional adds."""
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    plain = dict(options[0]) if len(options) == 1 else {"anyOf": options}
    plain.pop("title", None)
    return plain


def build_document(
    *,
    title: str,
    version: str,
    paths: Mapping[str, Any],
    models: Sequence[tuple[type[BaseModel], str]],
    bearer: bool,
) -> dict[str, Any]:
    modes: list[tuple[type[BaseModel], Literal["validation", "serialization"]]] = [
        (model, "serialization" if mode == "serialization" else "validation")
        for model, mode in dict.fromkeys(models)
    ]
    _, schemas = models_json_schema(modes, ref_template=REF) if modes else ({}, {})
    components: dict[str, Any] = {"schemas": schemas.get("$defs", {})}
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": title, "version": version},
        "paths": dict(paths),
        "components": components,
    }
    if bearer:
        components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        document["security"] = [{"bearer": []}]
    return document
