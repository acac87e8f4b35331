"""What `serve` bounds, and by how much.

Every field is a `serve` flag and a `SESSION_RECALL_*` variable of the same name
(`--write-deadline`, `SESSION_RECALL_WRITE_DEADLINE`): the command line is built from
this model, so a limit cannot exist in one place and not the other.
"""

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from session_recall.indexer import EventLimits, WriterOptions
from session_recall.recall import DEFAULT_PAGE_BYTES

MIB = 1024 * 1024


def _library(model: type[BaseModel], name: str) -> Any:
    """A library setting's field as it is (default, bounds, description), for a limit
    of `serve` that is that setting."""
    return model.model_fields[name]


class ServeLimits(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    write_deadline: float = Field(
        default=10.0,
        gt=0,
        description="Seconds within which POST /v1/events and the DELETE endpoints answer; "
        "past it, 503 with Retry-After, retries included.",
    )
    read_deadline: float = Field(
        default=5.0,
        gt=0,
        description="Seconds within which a recall answers (Elasticsearch stops the search "
        "there too); past it, 'unavailable, try again' (over HTTP, 503 with Retry-After).",
    )
    max_concurrent_reads: int = Field(
        default=4,
        ge=1,
        description="Recall searches run at once; more wait their turn, within their deadline. "
        "Writes never wait for them.",
    )
    max_events_per_request: int = Field(
        default=10_000, ge=1, description="Events in one POST /v1/events; more: 413."
    )
    max_pending_events: int = Field(
        default=100_000,
        ge=1,
        description="Events accepted and not yet written; past it, 503 with Retry-After.",
    )
    max_body_bytes: int = Field(
        default=20 * MIB, ge=1024, description="Bytes of one request body; more: 413."
    )
    max_inflight_bytes: int = Field(
        default=64 * MIB,
        ge=1024,
        description="Bytes of request bodies held at once, across all requests; a body "
        "that finds no room in time gets 503 with Retry-After.",
    )
    max_page_bytes: int = Field(
        default=DEFAULT_PAGE_BYTES,
        ge=1024,
        description="Bytes of one page of a read (GET .../sessions/{session}/events): a "
        "page of large events ends early, its next_cursor going on.",
    )
    body_timeout: float = Field(
        default=30.0, gt=0, description="Seconds to receive a whole request body; past it, 408."
    )
    header_timeout: float = Field(
        default=10.0,
        gt=0,
        description="Seconds a connection may take to send a request's headers; past it, "
        "it is closed.",
    )
    idle_timeout: int = Field(
        default=5, ge=1, description="Seconds an idle keep-alive connection stays open."
    )
    max_connections: int = Field(
        default=512,
        ge=1,
        description="Open connections; one more gets 503 and is closed at once.",
    )
    log_limit: int = Field(
        default=10,
        ge=1,
        description="Warnings and errors of one kind logged per minute; the rest are counted, "
        "and the count is logged.",
    )

    # The window of accepted times, the cap on new partitions and the types whose long
    # texts are cut: the library's own fields (default, bounds, description), flags
    # and variables of `serve` here.
    max_age_days: int = _library(EventLimits, "max_age_days")
    max_ahead_seconds: int = _library(EventLimits, "max_ahead_seconds")
    max_new_partitions: int = _library(WriterOptions, "max_new_partitions")
    truncate_types: tuple[str, ...] = _library(EventLimits, "truncate_types")

    def event_limits(self, **more: int) -> EventLimits:
        return EventLimits(
            max_age_days=self.max_age_days,
            max_ahead_seconds=self.max_ahead_seconds,
            truncate_types=self.truncate_types,
            **more,
        )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.max_events_per_request > self.max_pending_events:
            raise ValueError(
                f"max_events_per_request ({self.max_events_per_request}) must not exceed "
                f"max_pending_events ({self.max_pending_events}): such a request could never "
                "be taken"
            )
        if self.max_body_bytes > self.max_inflight_bytes:
            raise ValueError(
                f"max_body_bytes ({self.max_body_bytes}) must not exceed max_inflight_bytes "
                f"({self.max_inflight_bytes}): such a body could never be read"
            )
        return self


def envvar(field: str) -> str:
    """The environment variable of a limit: `SESSION_RECALL_` and its name."""
    return f"SESSION_RECALL_{field.upper()}"
