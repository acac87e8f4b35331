"""The ranking steps tried on LoCoMo's dev split that no default uses, as a recipe the
bench hands memory_search (`Experiment`, through the hooks of `recall.memory_recipe`):

- `expansion_terms`, `expansion_docs`, `expansion_weight`: pseudo-relevance feedback
  (`bench.expansion`): the keyword list fetched again with the stems of its first
  `expansion_docs` hits, the `expansion_terms` heaviest, at `expansion_weight`.
- `session_model`, `session_vector_weight`: a vector per session (stored under the
  model id `session_model`): each hit's score mixed with how near its session's
  vector is to the question (`with_session_prior`).
- `vector_context`: each vector hit's score mixed, at this weight, with those of the
  turns before it in the list (`bench.neighbour_scores`): context at search time.
- `second_round`, `second_weight`: a second kNN round, its query moved towards the
  stored vectors of the first `second_round` fused hits (`bench.vector_feedback`), its
  list joined to the first vector list.
- `zscore`: the two lists fused on z-scores rather than min-max normalised scores
  (`bench.zscore_fusion`).
- `entity_weight`: entity terms weighed up in the keyword list (issue 59, item 5): the
  question's names (capitalised words) and numbers matched again on the stem fields,
  at this share of their weights (the list fetched again with them).
- `clauses`: a question of several clauses ("what do A and B both like?", split at
  "and", "or", commas and semicolons) searched on keywords once per clause of two
  content words or more beside the whole, the lists merged on scores normalised by
  each list's best (issue 59, item 5).
- `session_exact`: the session ranking's best turn of each session (the product's
  `session_ranking` step, `recall.session_ranking`) found over every turn of the user
  (a kNN search `EXACT_TURNS` deep) rather than among the vector list's hits: what the
  paper computes, at a cost that grows with the history.
- `context_model`: the model id under which each event's vector *with the turns
  before it* is stored; its kNN list is fused with the event's own (`context_only`:
  instead of it).

Every search of a step carries the user's filters (`Ranking.filters`): a step never
reaches another user's events. `python -m bench.memory_eval --variants` runs them
(BENCHMARKS.md, "memory_search on LoCoMo").
"""

import re
from collections.abc import Generator, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from bench.expansion import expansion_terms
from bench.neighbour_scores import with_context
from bench.vector_feedback import seeded
from bench.zscore_fusion import zscore_fuse
from session_recall.core.stems import stems
from session_recall.core.stopwords import content_terms, content_words
from session_recall.embeddings import VECTORS_FIELD, vector_field, vector_key
from session_recall.recall import transport
from session_recall.recall.fusion import Fused, combined, fuse, ranked
from session_recall.recall.memory_plan import Key, Searches, key_of, scored
from session_recall.recall.memory_query import keyword_body, knn_body, vectors_body
from session_recall.recall.memory_recipe import DEFAULT_RECIPE, Ranking, Recipe, Step
from session_recall.recall.query import Body

_Step = Generator[Searches, list[Body], list[Body]]
K = TypeVar("K", bound=Hashable)
# The ids of the turns before an event, written by the enrichment pass with its context.
CONTEXT_OF = "context_of"


@dataclass(frozen=True)
class Experiment(Recipe):
    """memory_search's recipe with the steps of this module (all off by default)."""

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
    zscore: bool = False
    session_exact: bool = False
    entity_weight: float = 0.0
    clauses: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.session_vector_weight <= 1:
            raise ValueError("session_vector_weight must be within [0, 1]")
        if not 0 <= self.vector_context <= 1:
            raise ValueError(f"vector_context must be within [0, 1], not {self.vector_context}")
        if self.second_round < 0 or self.second_weight < 0:
            raise ValueError("second_round and second_weight are at least 0")
        if self.expansion_docs < 1 or self.expansion_terms < 0:
            raise ValueError("expansion_docs is at least 1, terms at least 0")
        if self.context_only and self.context_model is None:
            raise ValueError("context_only needs a context_model")

    def vector_models(self, model: str) -> list[str]:
        models = [] if self.context_only else [model]
        return models + ([self.context_model] if self.context_model is not None else [])

    def knn_source(self) -> list[str]:
        return [CONTEXT_OF] if self.vector_context else []

    def keyword(self, keyword: list[Body], ranking: Ranking) -> Step[list[Body]]:
        if self.entity_weight:
            entities = stems(" ".join(entity_terms(ranking.words)))
            if entities:
                body = keyword_body(
                    ranking.filters, ranking.words, stemmed=ranking.stemmed,
                    size=ranking.depth, expansion=entities, expansion_weight=self.entity_weight,
                )  # fmt: skip
                [answer] = yield Searches([body])
                keyword = transport.hits(answer)
        if self.clauses:
            parts = clauses_of(ranking.text)
            if len(parts) > 1:
                bodies = [keyword_body(ranking.filters, content_terms(part), stemmed=stems(part),
                                       size=ranking.depth) for part in parts]  # fmt: skip
                answers = yield Searches(bodies)
                keyword = merged([keyword, *(transport.hits(a) for a in answers)], ranking.depth)
        if not self.expansion_terms:
            return keyword
        return (
            yield from expanded(
                keyword, ranking.filters, ranking.words, ranking.stemmed, ranking.depth, self
            )
        )

    def nearest(
        self, nearest: list[tuple[Key, float]], lists: Sequence[list[Body]]
    ) -> list[tuple[Key, float]]:
        if not self.vector_context:
            return nearest
        before = {key_of(hit): _listed(hit, CONTEXT_OF) for hits in lists for hit in hits}
        return with_context(nearest, before, lambda key: key[1], weight=self.vector_context)

    def fused(
        self,
        fused: list[Fused[Key]],
        keyword: list[Body],
        nearest: list[tuple[Key, float]],
        ranking: Ranking,
    ) -> Step[tuple[list[Fused[Key]], list[list[Body]]]]:
        vector, model = ranking.vector, ranking.model
        if self.zscore and vector is not None:
            fused = zscore_fuse(scored(keyword), nearest, dense_weight=ranking.dense_weight)
        if not self.second_round or vector is None or model is None:
            return fused, []
        seeds = [f.key for f in fused[: self.second_round]]
        second = yield from second_round(
            vector, seeds, ranking.filters, model, ranking.depth, weight=self.second_weight
        )
        nearest = combined(nearest, scored(second))
        return fuse(scored(keyword), nearest, dense_weight=ranking.dense_weight), [second]

    def sessions(
        self, fused: list[Fused[Key]], sessions: dict[Key, str], ranking: Ranking
    ) -> Step[list[Fused[Key]]]:
        if self.session_exact and self.session_ranking and ranking.vector is not None:
            ranking, sessions = yield from _every_turn(ranking, sessions)
        if self.session_model is not None and ranking.vector is not None:
            wanted = sorted(set(sessions.values()))
            prior = yield from session_prior(
                ranking.vector, wanted, ranking.filters, self.session_model
            )
            fused = with_session_prior(fused, sessions, prior, weight=self.session_vector_weight)
        return (yield from super().sessions(fused, sessions, ranking))


# The default recipe as an experiment, for variants built on it.
DEFAULT_EXPERIMENT = Experiment(**{f: getattr(DEFAULT_RECIPE, f) for f in (
    "session_weight", "session_top", "session_ranking", "session_alpha")})  # fmt: skip


# A LoCoMo conversation holds fewer turns than this (at most 700).
EXACT_TURNS = 1_000


def _every_turn(
    ranking: Ranking, sessions: dict[Key, str]
) -> Generator[Searches, list[Body], tuple[Ranking, dict[Key, str]]]:
    """`ranking` with its vector list (`nearest`) as deep as the user's turns, and
    `sessions` knowing theirs: the best turn of every session is among them."""
    assert ranking.vector is not None and ranking.model is not None
    field = vector_field(ranking.model)
    [answer] = yield Searches([knn_body(ranking.filters, ranking.vector, field=field,
                                        size=EXACT_TURNS)])  # fmt: skip
    turns = transport.hits(answer)
    known = {**sessions, **{key_of(h): str(h["_source"]["session_id"]) for h in turns}}
    return replace(ranking, nearest=scored(turns)), known


_ENTITY = re.compile(r"^(?:[A-Z][\w'’-]*|\w*\d\w*)$")


def entity_terms(words: str) -> list[str]:
    """The names (capitalised words) and numbers among a question's content words."""
    return [word for word in words.split() if _ENTITY.match(word)]


_CLAUSE = re.compile(r"\s*(?:\band\b|\bor\b|[,;])\s*", re.IGNORECASE)


def clauses_of(text: str) -> list[str]:
    """A question's clauses that hold two content words or more (none for one)."""
    parts = [part for part in _CLAUSE.split(text) if len(content_words(part)) >= 2]
    return parts if len(parts) > 1 else []


def merged(lists: Sequence[list[Body]], depth: int) -> list[Body]:
    """Hit lists made one: each hit at its best score over them, each list's scores
    divided by its best; the `depth` best."""
    best: dict[Key, Body] = {}
    for hits in lists:
        top = max((float(h.get("_score") or 0.0) for h in hits), default=0.0) or 1.0
        for hit in hits:
            score = float(hit.get("_score") or 0.0) / top
            held = best.get(key_of(hit))
            if held is None or score > held["_score"]:
                best[key_of(hit)] = {**hit, "_score": score}
    return sorted(best.values(), key=lambda h: -h["_score"])[:depth]


def _listed(hit: Body, field: str) -> list[str]:
    value = hit.get("_source", {}).get(field) or []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def expanded(
    keyword: list[Body],
    filters: list[Body],
    words: str,
    stemmed: str,
    depth: int,
    recipe: Experiment,
) -> _Step:
    """The keyword list fetched again, its query expanded with the stems its best hits
    share (`bench.expansion`); the first list when they share none."""
    texts = [stems(str(hit["_source"].get("text", ""))) for hit in keyword]
    ranked = [(text, score) for text, (_, score) in zip(texts, scored(keyword), strict=True)]
    added = expansion_terms(
        ranked, stemmed, docs=recipe.expansion_docs, terms=recipe.expansion_terms
    )
    if not added:
        return keyword
    body = keyword_body(
        filters, words, stemmed=stemmed, size=depth,
        expansion=" ".join(added), expansion_weight=recipe.expansion_weight,
    )  # fmt: skip
    [answer] = yield Searches([body])
    return transport.hits(answer)


def second_round(
    vector: list[float],
    seeds: list[Key],
    filters: list[Body],
    model: str,
    depth: int,
    *,
    weight: float,
) -> _Step:
    """The vector list again, its query moved towards the seeds' stored vectors
    (`vector_feedback`); nothing when no seed has one. Every search carries the user's
    filters: a seed is one of the user's events or nothing."""
    field, key = vector_field(model), vector_key(model)
    [answer] = yield Searches([vectors_body(filters, [k[1] for k in seeds], field=field)])
    wanted = set(seeds)
    stored = [
        found
        for hit in transport.hits(answer)
        if key_of(hit) in wanted
        and (found := (hit["_source"].get(VECTORS_FIELD) or {}).get(key)) is not None
    ]
    if not stored:
        return []
    [again] = yield Searches([knn_body(filters, seeded(vector, stored, weight=weight), field=field,
                                       size=depth)])  # fmt: skip
    return transport.hits(again)


def session_prior(
    vector: list[float], sessions: list[str], filters: list[Body], model: str
) -> Generator[Searches, list[Body], dict[str, float]]:
    """How near each of `sessions`' vectors (stored under `model` on its turns) is to
    the question's `vector` (both of unit length): one turn per session, collapsed."""
    field, key = vector_field(model), vector_key(model)
    body: Body = {
        "query": {"bool": {"filter": [*filters, {"terms": {"session_id": sessions}}]}},
        "collapse": {"field": "session_id"},
        "size": len(sessions),
        "_source": {"includes": ["session_id", field], "exclude_vectors": False},
        "track_total_hits": False,
    }
    [answer] = yield Searches([body])
    near = {}
    for hit in transport.hits(answer):
        stored = (hit["_source"].get(VECTORS_FIELD) or {}).get(key)
        if stored is not None:
            near[str(hit["_source"]["session_id"])] = sum(
                a * b for a, b in zip(vector, stored, strict=True)
            )
    return near


def with_session_prior(
    fused: Sequence[Fused[K]],
    sessions: Mapping[K, str],
    prior: Mapping[str, float],
    *,
    weight: float,
) -> list[Fused[K]]:
    """`fused` ranked again with each hit's score mixed with its session's `prior` (how
    near a vector of the whole session is to the question), normalised over the
    sessions of the hits; a session without one counts 0."""
    if weight == 0 or not prior:
        return list(fused)
    high, low = max(prior.values()), min(prior.values())
    spread = high - low
    norm = {s: (p - low) / spread if spread > 0 else 1.0 for s, p in prior.items()}
    mixed = [
        replace(item, score=(1 - weight) * item.score + weight * norm.get(sessions[item.key], 0.0))
        for item in fused
    ]
    return ranked(mixed)
