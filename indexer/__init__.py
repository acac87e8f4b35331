"""Ingestion: session events into Elasticsearch, at-least-once and idempotent.

Library first: `ingest` (NDJSON lines), `Writer` (any events), `Batcher` (merges
concurrent callers) and `erase` (a scope, with its tombstone) return pydantic models.
The CLI (`session-recall ingest|serve|delete`) and the HTTP endpoints are thin
adapters over them.
"""

from indexer.batcher import Batcher, BatchingOptions
from indexer.checkpoint import Position
from indexer.deadletter import DeadLetter
from indexer.document import document_body, document_id, to_document
from indexer.erasure import ErasureResult, erase
from indexer.errors import (
    AliasMissing,
    ErasureIncomplete,
    IndexerError,
    InvalidEvent,
    Overloaded,
    WriteUnavailable,
)
from indexer.event import Event, derived_event_id
from indexer.ingest import ingest
from indexer.lines import Line, follow_file, read_stream
from indexer.parsing import EventLimits, Parsed, Rejected, parse_line, parse_object
from indexer.results import EventResult, IngestSummary, Status
from indexer.retry import RetryPolicy
from indexer.scope import Scope
from indexer.tombstones import tombstone_index
from indexer.writer import Submission, Writer, WriterOptions, Written

__all__ = [
    "AliasMissing",
    "Batcher",
    "BatchingOptions",
    "DeadLetter",
    "ErasureIncomplete",
    "ErasureResult",
    "Event",
    "EventLimits",
    "EventResult",
    "IndexerError",
    "IngestSummary",
    "InvalidEvent",
    "Line",
    "Overloaded",
    "Parsed",
    "Position",
    "Rejected",
    "RetryPolicy",
    "Scope",
    "Status",
    "Submission",
    "WriteUnavailable",
    "Writer",
    "WriterOptions",
    "Written",
    "derived_event_id",
    "document_body",
    "document_id",
    "erase",
    "follow_file",
    "ingest",
    "parse_line",
    "parse_object",
    "read_stream",
    "to_document",
    "tombstone_index",
]
