"""Ingestion: session events into Elasticsearch, at-least-once and idempotent.

Library first: `ingest` (NDJSON lines), `Writer` (any events), `Batcher` (merges
concurrent callers) and `erase` (a scope, with its tombstone) return pydantic models.
`enrich` adds what an event gains after it is stored: stems, context and vectors.
`MemoryWriter` keeps a user's memories (with their source events); `Consolidator`
mines a user's new events into them.
The CLI (`session-recall ingest|serve|delete|embed`) and the HTTP endpoints are thin
adapters over them.
"""

from session_recall.indexer.batcher import REFRESH_POLICIES, Batcher, BatchingOptions, Refresh
from session_recall.indexer.checkpoint import Position
from session_recall.indexer.claiming import claim
from session_recall.indexer.deadletter import DeadLetter
from session_recall.indexer.deadline import Deadline
from session_recall.indexer.document import document_body, document_id, to_document
from session_recall.indexer.enrichment import (
    Enricher,
    EnrichmentSummary,
    enrich,
    follow,
    pending,
    refused,
)
from session_recall.indexer.enrichment.consolidation import ConsolidationSummary, Consolidator
from session_recall.indexer.enrichment.memories import (
    MemoriesMissing,
    MemoryNotFound,
    MemoryRefused,
    MemoryWriter,
    SavedMemory,
)
from session_recall.indexer.erasure import (
    ErasurePreview,
    ErasureResult,
    after_removal,
    erase,
    preview_erasure,
)
from session_recall.indexer.errors import (
    AliasMissing,
    ErasureIncomplete,
    IndexerError,
    InvalidEvent,
    Overloaded,
    UnwritablePath,
    VectorFieldsMissing,
    WriteFailed,
    WriteUnavailable,
)
from session_recall.indexer.event import Event, derived_event_id
from session_recall.indexer.ingest import check_outputs, ingest
from session_recall.indexer.lines import Line, follow_file, read_stream
from session_recall.indexer.parsing import (
    EventLimits,
    Parsed,
    Rejected,
    explain,
    parse_line,
    parse_object,
)
from session_recall.indexer.results import EventResult, IngestSummary, Status
from session_recall.indexer.retry import RetryPolicy
from session_recall.indexer.scope import Scope
from session_recall.indexer.tombstones import tombstone_index
from session_recall.indexer.writer import Submission, Writer, WriterOptions, Written

__all__ = [
    "REFRESH_POLICIES",
    "AliasMissing",
    "Batcher",
    "BatchingOptions",
    "ConsolidationSummary",
    "Consolidator",
    "DeadLetter",
    "Deadline",
    "Enricher",
    "EnrichmentSummary",
    "ErasureIncomplete",
    "ErasurePreview",
    "ErasureResult",
    "Event",
    "EventLimits",
    "EventResult",
    "IndexerError",
    "IngestSummary",
    "InvalidEvent",
    "Line",
    "MemoriesMissing",
    "MemoryNotFound",
    "MemoryRefused",
    "MemoryWriter",
    "Overloaded",
    "Parsed",
    "Position",
    "Refresh",
    "Rejected",
    "RetryPolicy",
    "SavedMemory",
    "Scope",
    "Status",
    "Submission",
    "UnwritablePath",
    "VectorFieldsMissing",
    "WriteFailed",
    "WriteUnavailable",
    "Writer",
    "WriterOptions",
    "Written",
    "after_removal",
    "check_outputs",
    "claim",
    "derived_event_id",
    "document_body",
    "document_id",
    "enrich",
    "erase",
    "explain",
    "follow",
    "follow_file",
    "ingest",
    "parse_line",
    "parse_object",
    "pending",
    "preview_erasure",
    "read_stream",
    "refused",
    "to_document",
    "tombstone_index",
]
