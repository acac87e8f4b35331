"""Structured logs: one JSON object per line (`--log-format json`, or
`SESSION_RECALL_LOG_FORMAT=json`), written by `python-json-logger`.

Each line holds `time` (ISO 8601, UTC), `level`, `logger`, `message`, and `request_id`:
the id of the `serve` request being handled when the line was written (None outside
any), the same one the response carries in its `X-Request-Id` header.
"""

import contextvars
import logging
import logging.config
from typing import Any, Literal

from pythonjsonlogger.json import JsonFormatter

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")

# The request being handled, set by serve's middleware for the task (and the threads
# it hands work to) that handles it.
REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "session_recall_request_id", default=None
)
_FIELDS = ["levelname", "name", "message", "request_id"]
_RENAMED = {"levelname": "level", "name": "logger"}
# uvicorn's copy of a message with terminal colours: the message is there already.
_LEFT_OUT = ["color_message"]


class RequestId(logging.Filter):
    """Gives each record the id of the request it was written for."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


def json_formatter() -> logging.Formatter:
    """The JSON lines' formatter (a factory, as `logging.config` takes one)."""
    reserved = [*logging.LogRecord("", 0, "", 0, "", None, None).__dict__, *_LEFT_OUT]
    return JsonFormatter(
        _FIELDS,
        rename_fields=_RENAMED,
        timestamp="time",
        reserved_attrs=reserved,
        json_ensure_ascii=False,
    )


def as_json(config: dict[str, Any]) -> dict[str, Any]:
    """A `logging.config.dictConfig` whose formatters all write JSON lines and whose
    handlers add the request id (`config` is changed and returned)."""
    config["formatters"] = {
        name: {"()": f"{__name__}.json_formatter"} for name in config.get("formatters", {})
    }
    filters = config.setdefault("filters", {})
    filters["request_id"] = {"()": f"{__name__}.RequestId"}
    for handler in config.get("handlers", {}).values():
        handler["formatter"] = handler.get("formatter", "default")
        handler["filters"] = [*handler.get("filters", []), "request_id"]
    return config


def configure(log_format: LogFormat, level: str = "info") -> None:
    """Logging for a command that runs for long (`ingest --follow`, `embed --follow`):
    its own lines at `level` and everything else's warnings, to stderr. The text format
    leaves Python's default (warnings and errors, the message alone) as it was."""
    if log_format == "text":
        return
    config: dict[str, Any] = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"default": {}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}},
        "loggers": {
            "session_recall": {"handlers": ["stderr"], "level": level.upper(), "propagate": False}
        },
        "root": {"handlers": ["stderr"], "level": "WARNING"},
    }
    logging.config.dictConfig(as_json(config))
