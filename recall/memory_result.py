"""What memory_search returns: hits by relevance, each with the events around it."""

from pydantic import BaseModel, ConfigDict, Field

from session_recall.recall.memory_arguments import SearchMode
from session_recall.recall.page import RecallItem


class Score(BaseModel):
    """Where the hit ranked in each list (1 is first; None: not in that list) and its
    fused score, from 0 to 1: each list's score normalised, then weighed (see
    `recall.fusion`), and in hybrid mode mixed with its session's (`session_scores`).
    With a reranker (`recall.rerank`), the hits come in its order; `fused` stays the
    fused score."""

    model_config = ConfigDict(frozen=True)

    keyword_rank: int | None = None
    vector_rank: int | None = None
    fused: float


class MemoryHit(BaseModel):
    """One event found, with up to `context` events of its session before and after
    it, oldest first."""

    model_config = ConfigDict(frozen=True)

    event: RecallItem
    before: list[RecallItem] = Field(default_factory=list)
    after: list[RecallItem] = Field(default_factory=list)
    score: Score


class MemorySearchResult(BaseModel):
    """Hits best first. `mode` is how the search ran; when it differs from
    `requested_mode` (the embedder is down, say), `notice` says why."""

    model_config = ConfigDict(frozen=True)

    hits: list[MemoryHit]
    mode: SearchMode
    requested_mode: SearchMode
    notice: str | None = None
