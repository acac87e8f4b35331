""" "What is the current X" on a real node: the labelled set of kept memories stored,
consolidated and asked through the memories search, as a user's agent would ask.

    export ELASTICSEARCH_URL=$(session-recall node start | tail -n1)
    python -m bench.memory_current                      # the dev split
    python -m bench.memory_current --split held_out     # checked on, never tuned on

`python -m bench.memory_mining --report BENCHMARKS.md` runs this on both splits and
writes its figure beside the miner's.

Each conversation of the split (`bench/data/memories/`) is one user's events on an
alias of its own (dropped afterwards unless `--keep`). Session after session, in time
order, its turns are stored through the writer, then `Consolidator.run` mines what is
new for that user (what `session-recall consolidate --user U` does, the statements
embedded with the configured embedder: `SESSION_RECALL_EMBEDDER`, e5-small by default).
Once every session is mined, each question is asked through `MemoriesSearcher.search`
(`session-recall memories search --user U QUESTION`): it is answered when the first
memory returned is the expected one, the current memory mined from the turn that last
stated X (its sources name that turn, its kind is the label's).

`--similarity` looks instead (no node) at whether vector similarity could join subjects
that share no word, as superseding might: the cosine of each pair of one user's
memories of the same kind whose subject keys share no word, those on one labelled
topic marked, best first.
"""

import argparse
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch

from bench.memory_mining import SPLITS, Question, Split, all_memories, load, sessions
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.core.kept_memories import Memory
from session_recall.embeddings import Embedder
from session_recall.factories import embedder_for
from session_recall.indexer import Event, Submission, Writer
from session_recall.indexer.enrichment.consolidation import Consolidator
from session_recall.indexer.enrichment.miner import Turn
from session_recall.recall.memories import MemoriesSearcher
from session_recall.templates import install, uninstall

ALIAS_PREFIX = "bench_current_"


@dataclass(frozen=True)
class Asked:
    """One question and the memory the search returned first (None: none)."""

    question: Question
    first: Memory | None

    @property
    def answered(self) -> bool:
        first = self.first
        return (
            first is not None
            and first.current
            and self.question.expected_event_id in first.sources
            and first.kind == self.question.expected_kind
        )

    def miss(self) -> str:
        got = "nothing" if self.first is None else f"{self.first.kind} {self.first.statement!r}"
        q = self.question
        return f"{q.user}, {q.question!r}: first {got}, expected {q.expected_statement!r}"


@dataclass(frozen=True)
class Searched:
    split: str
    model: str
    memories: int  # mined and kept on the store, superseded ones included
    current: int
    asked: list[Asked]
    consolidate_s: float

    @property
    def questions(self) -> int:
        return len(self.asked)

    @property
    def answered(self) -> int:
        return sum(a.answered for a in self.asked)

    @property
    def share(self) -> float:
        return self.answered / self.questions if self.questions else 0.0

    @property
    def misses(self) -> list[str]:
        return [a.miss() for a in self.asked if not a.answered]


def _event(user: str, turn: Turn) -> Event:
    return Event.model_validate(
        {
            "event_id": turn.event_id,
            "user_id": user,
            "session_id": turn.session_id,
            "timestamp": turn.timestamp.isoformat().replace("+00:00", "Z"),
            "type": turn.type,
            "text": turn.text,
        }
    )


@contextmanager
def alias_for_run(client: Elasticsearch, *, keep: bool = False) -> Iterator[str]:
    """A fresh alias, set up (its memories index too), dropped afterwards unless `keep`."""
    alias = ALIAS_PREFIX + uuid.uuid4().hex[:8]
    install(client, alias)
    try:
        yield alias
    finally:
        if not keep:
            uninstall(client, alias)


def store_and_consolidate(
    client: Elasticsearch, alias: str, split: Split, embedder: Embedder | None
) -> float:
    """Every user's sessions stored and mined one pass each, in time order; the seconds
    the passes took (the writes left out)."""
    writer = Writer(client, alias)
    consolidator = Consolidator(client, alias, embedder=embedder)
    seconds = 0.0
    for user, turns in split.turns.items():
        for session in sessions(turns):
            refused = [
                w.result
                for w in writer.write(Submission(_event(user, t)) for t in session)
                if not w.result.stored
            ]
            if refused:
                raise RuntimeError(f"{len(refused)} turns were refused, the first: {refused[0]}")
            writer.refresh()
            started = time.perf_counter()
            consolidator.run(user_id=user)
            seconds += time.perf_counter() - started
    return seconds


def ask(client: Elasticsearch, alias: str, split: Split, embedder: Embedder | None) -> list[Asked]:
    """Each question through its user's memories search: the first memory returned."""
    asked = []
    for question in split.questions:
        searcher = MemoriesSearcher(client, user_id=question.user, alias=alias, embedder=embedder)
        found = searcher.search(question.question, limit=1).memories
        asked.append(Asked(question, found[0] if found else None))
    return asked


def _counts(client: Elasticsearch, alias: str, split: Split) -> tuple[int, int]:
    every = current = 0
    for user in split.turns:
        searcher = MemoriesSearcher(client, user_id=user, alias=alias, cursor_key=b"k" * 32)
        cursor: str | None = None
        while True:
            page = searcher.list(include_superseded=True, page_size=500, cursor=cursor)
            every += len(page.memories)
            current += sum(m.current for m in page.memories)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    return every, current


def measure(
    client: Elasticsearch,
    name: str,
    embedder: Embedder | None,
    *,
    keep: bool = False,
    log: Callable[[str], Any] = print,
) -> Searched:
    """Split `name` stored, consolidated and asked on a fresh alias of `client`'s node."""
    split = load(name)
    model = "no embedder (keywords)" if embedder is None else embedder.model_id
    if embedder is not None and hasattr(embedder, "load"):
        embedder.load()  # the model's start-up is not the passes'
    with alias_for_run(client, keep=keep) as alias:
        seconds = store_and_consolidate(client, alias, split, embedder)
        every, current = _counts(client, alias, split)
        asked = ask(client, alias, split, embedder)
        log(f"{name}: {every} memories kept in {alias} ({current} current), {model}")
    return Searched(name, model, every, current, asked, seconds)


def measure_splits(
    settings: Settings, names: Sequence[str] = SPLITS, *, log: Callable[[str], Any] = print
) -> list[Searched]:
    """Each split on the node the settings name, with the embedder they configure."""
    client = make_client(settings, request_timeout=120)
    embedder = embedder_for(settings)
    return [measure(client, name, embedder, log=log) for name in names]


@dataclass(frozen=True)
class Pair:
    cosine: float
    same_topic: bool
    newer: str
    older: str


def _unit(vector: Any) -> list[float]:
    values = [float(v) for v in vector]
    norm = sum(v * v for v in values) ** 0.5 or 1.0
    return [v / norm for v in values]


def similarity_pairs(name: str, embedder: Embedder) -> list[Pair]:
    """Pairs of one user's memories (mined offline, `memory_mining`) of the same kind
    whose subject keys share no word, with their statements' cosine, best first."""
    split = load(name)
    topic = {(label.event_id, label.kind): label.topic for label in split.labels}
    pairs = []
    for memories in all_memories(split).values():
        vectors = embedder.embed([m.statement for m in memories])
        for i, newer in enumerate(memories):
            for j, older in enumerate(memories[:i]):
                keys = [set((m.subject or "").replace("|", " ").split()) for m in (newer, older)]
                a, b = vectors[i], vectors[j]
                if newer.kind != older.kind or not all(keys) or keys[0] & keys[1]:
                    continue
                if a is None or b is None:
                    continue
                cosine = sum(x * y for x, y in zip(_unit(a), _unit(b), strict=True))
                same = topic.get((newer.sources[0], newer.kind)) == topic.get(
                    (older.sources[0], older.kind)
                )
                pairs.append(Pair(cosine, same, newer.statement, older.statement))
    return sorted(pairs, key=lambda p: -p.cosine)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=SPLITS, default="dev")
    parser.add_argument("--es-url", default=None, help="default: ELASTICSEARCH_URL")
    parser.add_argument("--keep", action="store_true", help="keep the alias afterwards")
    parser.add_argument(
        "--similarity", action="store_true", help="statement cosines across subjects (no node)"
    )
    args = parser.parse_args(argv)
    settings = Settings() if args.es_url is None else Settings(ELASTICSEARCH_URL=args.es_url)
    if args.similarity:
        embedder = embedder_for(settings)
        if embedder is None:
            raise SystemExit("--similarity needs an embedder: set SESSION_RECALL_EMBEDDER.")
        pairs = similarity_pairs(args.split, embedder)
        shown = [p for p in pairs[:10]] + [p for p in pairs[10:] if p.same_topic]
        for pair in shown:
            mark = "same topic" if pair.same_topic else "          "
            print(f"{pair.cosine:.3f} {mark} {pair.newer!r} / {pair.older!r}")
        return 0
    client = make_client(settings, request_timeout=120)
    result = measure(client, args.split, embedder_for(settings), keep=args.keep)
    print(
        f"current X, first hit of the memories search ({result.model}): "
        f"{result.answered}/{result.questions} ({result.share:.2f})",
        *(f"  missed: {miss}" for miss in result.misses),
        sep="\n",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
