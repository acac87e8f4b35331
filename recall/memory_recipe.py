"""How memory_search ranks in hybrid mode beyond fusing its two lists, and the seam
where the bench adds the steps it tries.

The product runs two steps: the published session ranking (`session_ranking`), each
hit's score mixed with its session's, scored by BM25 over the session's whole text and
its best turn; then session-level scoring (`session_scores`), each hit's score mixed
with the mean of its session's best. The other steps tried on LoCoMo's dev split
(query expansion, a second vector round, a vector per session, context at search time,
vectors of an event with its context) live in `bench/ranking_steps.py`, as a `Recipe`
that overrides the hooks below; `python -m bench.memory_eval --variants` runs them.
"""

from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from session_recall.recall.fusion import Fused
from session_recall.recall.memory_plan import Key, Searches
from session_recall.recall.query import Body
from session_recall.recall.session_ranking import best_turns, session_scores, with_session_ranking
from session_recall.recall.session_scores import with_sessions

T = TypeVar("T")
# A step that may search again: it yields its `Searches`, is sent their answers, and
# returns what it made.
Step = Generator[Searches, list[Body], T]


@dataclass(frozen=True)
class Ranking:
    """What a ranking step may use of the search: its filters (the user's first), the
    query's words and stems, each list's depth, the query's vector and the model's id
    (None in keyword mode), the vector list's weight in fusion, and, once the lists are
    fetched, the vector list as fusion took it (`nearest`) and each session's BM25
    over its whole text (`session_bm25`; empty without session documents); `text`: the
    query as asked."""

    filters: list[Body]
    words: str
    stemmed: str
    depth: int
    vector: list[float] | None
    model: str | None
    dense_weight: float
    nearest: Sequence[tuple[Key, float]] = ()
    session_bm25: Mapping[str, float] = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True)
class Recipe:
    """The ranking steps after the keyword and vector lists are fetched.

    `session_ranking`, `session_alpha`: the published session ranking
    (`session_ranking`): each hit's score mixed, at `session_ranking`, with its
    session's, `session_alpha` of it BM25 over the session's text (0: the step is off,
    and its search is not sent). `session_weight`, `session_top`: session-level scoring
    (`session_scores`): each hit's score mixed with the mean of its session's
    `session_top` best. The methods are the hooks of the plan (`memory_search`), which
    a bench recipe overrides."""

    session_weight: float = 0.0
    session_top: int = 3
    session_ranking: float = 0.0
    session_alpha: float = 0.5

    def __post_init__(self) -> None:
        if not 0 <= self.session_weight <= 1:
            raise ValueError(f"session_weight must be within [0, 1], not {self.session_weight}")
        if self.session_top < 1:
            raise ValueError("session_top is at least 1")
        for name in ("session_ranking", "session_alpha"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be within [0, 1], not {getattr(self, name)}")

    def vector_models(self, model: str) -> list[str]:
        """The models whose kNN lists are fetched (and fused into one)."""
        return [model]

    def knn_source(self) -> list[str]:
        """Fields a vector hit carries beyond what a hit needs."""
        return []

    def keyword(self, keyword: list[Body], ranking: Ranking) -> Step[list[Body]]:
        """The keyword list, as the steps after it see it."""
        return keyword
        yield  # a step that searches nothing more

    def nearest(
        self, nearest: list[tuple[Key, float]], lists: Sequence[list[Body]]
    ) -> list[tuple[Key, float]]:
        """The vector lists made one (`lists`: their hits), as fusion takes it."""
        return nearest

    def fused(
        self,
        fused: list[Fused[Key]],
        keyword: list[Body],
        nearest: list[tuple[Key, float]],
        ranking: Ranking,
    ) -> Step[tuple[list[Fused[Key]], list[list[Body]]]]:
        """The fused list, and any further list of hits it drew on."""
        return fused, []
        yield  # a step that searches nothing more

    def sessions(
        self, fused: list[Fused[Key]], sessions: dict[Key, str], ranking: Ranking
    ) -> Step[list[Fused[Key]]]:
        """The fused list ranked again by sessions (`sessions`: each hit's session)."""
        if self.session_ranking and ranking.session_bm25:
            dense = best_turns(ranking.nearest, sessions)
            scores = session_scores(
                ranking.session_bm25, dense, alpha=self.session_alpha,
                among=[sessions[f.key] for f in fused],
            )  # fmt: skip
            fused = with_session_ranking(fused, sessions, scores, weight=self.session_ranking)
        if self.session_weight:
            fused = with_sessions(fused, sessions, weight=self.session_weight, top=self.session_top)
        return fused
        yield  # a step that searches nothing more


# What memory_search does unless told otherwise: session-level scoring at 0.2 over each
# session's three best, the one step whose figures on LoCoMo's dev split earned it a
# place; the others cost more than they gave, or broke a bound (BENCHMARKS.md,
# "memory_search on LoCoMo").
DEFAULT_RECIPE = Recipe(session_weight=0.2, session_top=3, session_ranking=0.4, session_alpha=0.7)
