"""How memory_search ranks in hybrid mode beyond fusing its two lists: the steps tried
on LoCoMo's dev split, each off unless its figures earned it a place (BENCHMARKS.md,
"memory_search on LoCoMo"; `python -m bench.memory_eval --variants` runs them)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Recipe:
    """The ranking steps after the keyword and vector lists are fetched.

    - `session_weight`, `session_top`: session-level scoring (`session_scores`): each
      hit's score mixed with the mean of its session's `session_top` best.
    - `expansion_terms`, `expansion_docs`, `expansion_weight`: pseudo-relevance feedback
      (`expansion`): the keyword list fetched again with the stems of its first
      `expansion_docs` hits, the `expansion_terms` heaviest, at `expansion_weight`.
    - `session_model`, `session_vector_weight`: a vector per session (stored under the
      model id `session_model`): each hit's score mixed with how near its session's
      vector is to the question (`session_scores.with_session_prior`).
    - `vector_context`: each vector hit's score mixed, at this weight, with those of the
      turns before it in the list (`neighbour_scores`): context at search time.
    - `second_round`, `second_weight`: a second kNN round, its query moved towards the
      stored vectors of the first `second_round` fused hits (`vector_feedback`), its
      list joined to the first vector list.
    - `context_model`: the model id under which each event's vector *with the turns
      before it* is stored; its kNN list is fused with the event's own
      (`context_only`: instead of it).
    """

    session_weight: float = 0.0
    session_top: int = 3
    expansion_terms: int = 0
    expansion_docs: int = 5
    expansion_weight: float = 0.3
    session_model: str | None = None
    session_vector_weight: float = 0.0
    vector_context: float = 0.0
    second_round: int = 0
    second_weight: float = 0.5
    context_model: str | None = None
    context_only: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.session_weight <= 1:
            raise ValueError(f"session_weight must be within [0, 1], not {self.session_weight}")
        if not 0 <= self.session_vector_weight <= 1:
            raise ValueError("session_vector_weight must be within [0, 1]")
        if not 0 <= self.vector_context <= 1:
            raise ValueError(f"vector_context must be within [0, 1], not {self.vector_context}")
        if self.second_round < 0 or self.second_weight < 0:
            raise ValueError("second_round and second_weight are at least 0")
        if self.session_top < 1 or self.expansion_docs < 1 or self.expansion_terms < 0:
            raise ValueError("session_top and expansion_docs are at least 1, terms at least 0")
        if self.context_only and self.context_model is None:
            raise ValueError("context_only needs a context_model")


# What memory_search does unless told otherwise: session-level scoring at 0.2 over each
# session's three best, the one step whose figures on LoCoMo's dev split earned it a
# place; the others cost more than they gave, or broke a bound (BENCHMARKS.md,
# "memory_search on LoCoMo").
DEFAULT_RECIPE = Recipe(session_weight=0.2, session_top=3)
