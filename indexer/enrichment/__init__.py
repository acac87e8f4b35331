"""The enrichment: what a stored event gains after it is acknowledged.

Storing an event is what `ingest` and `serve` acknowledge, at the speed of a bulk
request; what an event gains from its neighbours and from a model comes after, here:

- its **stems**: the English stems of its text (`core.stems`), so that keyword recall
  matches word forms on a distribution without language analyzers;
- its **context**: the stems of its text with the turns just before it in its session
  (`context_rule`), kept true when a turn it holds is erased (`repair`);
- its **vector**, from the configured embedder (`embedding_models` lists the models
  that processed it; a text of punctuation alone has no vector).

`enriched` lists the context rule's version (`CONTEXT_MARK`) once stems and context are
there. Until then recall still finds the event by the words of its own text: the
keyword list searches `text` beside the enriched fields, so no event is ever invisible.

One concern a module:

- `passes`: one pass (`enrich`), page after page of pending events;
- `pending`: what awaits enrichment, and its counts; `summary`: what a pass did;
- `context_rule`: the rule itself, pure;
- `turns`: the reads of a session's turns; `paging`: pages in the event order;
- `repair`: conditional context writes, and the repairs erasure and `prune` call;
- `page_vectors`: a page's vectors, embedded beside the pass;
- `vector_mapping`: the vector fields on the indices; `vector_models`: the models an
  alias holds, and dropping one's vectors;
- `follower`: pass after pass (`follow`, `Enricher`); `slices` and `leases`: how
  enrichers share an alias; `calls`: how it calls Elasticsearch;
- kept memories: `miner` (statements worth keeping, from user turns), `subjects` (what
  a statement is about), `superseding` (which of them a later one replaces);
  `model_miner` (the same from a chat-completions endpoint, off by default), with
  `mining_request` (what it sends) and `mining_answer` (what it takes back).

Everything else that an event gains later belongs in a module of its own here.
"""

from session_recall.indexer.enrichment.calls import FOLLOW_RETRY
from session_recall.indexer.enrichment.context_rule import CONTEXT_MARK
from session_recall.indexer.enrichment.follower import Enricher, FollowOptions, follow
from session_recall.indexer.enrichment.leases import Leased
from session_recall.indexer.enrichment.passes import DEFAULT_PAGE, PAGE_BYTES, enrich
from session_recall.indexer.enrichment.pending import pending, pending_query, refused
from session_recall.indexer.enrichment.slices import EVERYTHING, Fixed, Share, Slice, slices_query
from session_recall.indexer.enrichment.summary import EnrichmentSummary
from session_recall.indexer.enrichment.vector_mapping import map_vector_field
from session_recall.indexer.enrichment.vector_models import drop_model, stored_models

__all__ = [
    "CONTEXT_MARK",
    "DEFAULT_PAGE",
    "EVERYTHING",
    "FOLLOW_RETRY",
    "PAGE_BYTES",
    "Enricher",
    "EnrichmentSummary",
    "Fixed",
    "FollowOptions",
    "Leased",
    "Share",
    "Slice",
    "drop_model",
    "enrich",
    "follow",
    "map_vector_field",
    "pending",
    "pending_query",
    "refused",
    "slices_query",
    "stored_models",
]
