"""The built-in miner and superseding on the labelled set of kept memories.

    python -m bench.memory_mining                       # the dev split
    python -m bench.memory_mining --split held_out      # checked on, never tuned on
    python -m bench.memory_mining --report BENCHMARKS.md  # both splits, into the report,
                                                        # with bench.memory_current's
                                                        # figure (ELASTICSEARCH_URL)

No Elasticsearch: each conversation of the split (`bench/data/memories/`, its README
says the format) is one user. Its sessions are mined one pass each, in time order, as
`consolidate` reads a user's new events; each candidate is kept as a memory, superseding
what `superseding.superseded_by` names among that user's current ones.

It reports, per kind and over all kinds, the miner's precision and recall against the
turns' labels (a candidate is right when its turn carries a label of its kind), and the
share of "what is the current X" questions whose expected memory, the one mined from
the turn that last stated X, is current and the single current memory on X: every other
turn labelled with X has had its memory superseded.

`current_memories(split)` returns each user's memories after the passes, for a search
to be run on them.
"""

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from bench import sections
from session_recall.indexer.enrichment import subjects
from session_recall.indexer.enrichment.miner import MINER_VERSION, Candidate, Kind, Turn, mine
from session_recall.indexer.enrichment.superseding import Current, superseded_by

if TYPE_CHECKING:
    from bench.memory_current import Searched

DATA = Path(__file__).parent / "data" / "memories"
SPLITS = ("dev", "held_out")
KINDS: tuple[Kind, ...] = get_args(Kind)
START = "<!-- Kept memories: from python -m bench.memory_mining --report -->"
END = "<!-- /Kept memories -->"


@dataclass(frozen=True)
class Label:
    event_id: str
    kind: Kind
    statement: str
    topic: str


@dataclass(frozen=True)
class Question:
    user: str
    question: str
    topic: str
    expected_event_id: str
    expected_kind: Kind
    expected_statement: str


@dataclass
class Memory:
    memory_id: str
    user: str
    kind: Kind
    statement: str
    subject: str | None
    sources: tuple[str, ...]
    valid_from: datetime
    superseded_by: str | None = None

    @property
    def current(self) -> bool:
        return self.superseded_by is None


@dataclass(frozen=True)
class Split:
    name: str
    turns: dict[str, list[Turn]]  # per user (one conversation each), in time order
    labels: list[Label]
    questions: list[Question]


@dataclass
class Scores:
    true_positives: Counter[str] = field(default_factory=Counter)
    false_positives: Counter[str] = field(default_factory=Counter)
    false_negatives: Counter[str] = field(default_factory=Counter)

    def precision(self, kind: str | None = None) -> float | None:
        tp, fp = self._sum(self.true_positives, kind), self._sum(self.false_positives, kind)
        return tp / (tp + fp) if tp + fp else None

    def labelled(self, kind: str | None = None) -> int:
        return self._sum(self.true_positives, kind) + self._sum(self.false_negatives, kind)

    def recall(self, kind: str | None = None) -> float | None:
        tp, fn = self._sum(self.true_positives, kind), self._sum(self.false_negatives, kind)
        return tp / (tp + fn) if tp + fn else None

    @staticmethod
    def _sum(counts: Counter[str], kind: str | None) -> int:
        return counts[kind] if kind is not None else sum(counts.values())


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load(name: str) -> Split:
    """A split of the labelled set."""
    if name not in SPLITS:
        raise SystemExit(f"Unknown split {name!r}: choose one of {', '.join(SPLITS)}.")
    rows = _read(DATA / name / "turns.jsonl")
    turns: dict[str, list[Turn]] = {}
    labels: list[Label] = []
    for row in rows:
        turn = Turn(
            event_id=row["event_id"],
            timestamp=datetime.fromisoformat(row["timestamp"]),
            type=row["type"],
            text=row["text"],
            session_id=row["session_id"],
        )
        turns.setdefault(row["conversation"], []).append(turn)
        labels += [
            Label(row["event_id"], label["kind"], label["statement"], label["topic"])
            for label in row["labels"]
        ]
    questions = [
        Question(
            user=q["conversation"],
            question=q["question"],
            topic=q["topic"],
            expected_event_id=q["expected_event_id"],
            expected_kind=q["expected_kind"],
            expected_statement=q["expected_statement"],
        )
        for q in _read(DATA / name / "questions.jsonl")
    ]
    return Split(name, turns, labels, questions)


def sessions(turns: Sequence[Turn]) -> Iterator[list[Turn]]:
    """A user's turns a session at a time, in time order: what each pass mines."""
    ordered = sorted(turns, key=lambda t: (t.timestamp, t.event_id))
    for _, session in groupby(ordered, key=lambda t: t.session_id):
        yield list(session)


def consolidate(user: str, turns: Sequence[Turn]) -> list[Memory]:
    """One user's memories after one mining pass per session, in time order."""
    memories: list[Memory] = []
    stamps = {turn.event_id: turn.timestamp for turn in turns}
    for session in sessions(turns):
        for candidate in mine(session):
            current = [
                Current(m.memory_id, m.kind, m.subject, m.statement, m.valid_from)
                for m in memories
                if m.current
            ]
            memory_id = f"{user}-m{len(memories) + 1:03d}"
            replaced = set(superseded_by(candidate, current))
            for memory in memories:
                if memory.memory_id in replaced:
                    memory.superseded_by = memory_id
            memories.append(_memory(memory_id, user, candidate, stamps))
    return memories


def _memory(memory_id: str, user: str, candidate: Candidate, stamps: dict[str, datetime]) -> Memory:
    return Memory(
        memory_id=memory_id,
        user=user,
        kind=candidate.kind,
        statement=candidate.statement,
        subject=candidate.subject,
        sources=candidate.sources,
        valid_from=max(stamps[source] for source in candidate.sources),
    )


def all_memories(split: Split) -> dict[str, list[Memory]]:
    """Every user's memories, superseded ones included."""
    return {user: consolidate(user, turns) for user, turns in split.turns.items()}


def current_memories(name: str) -> dict[str, list[Memory]]:
    """Each user's current memories after mining split `name`: what a search of the
    store would be run on."""
    return {
        user: [m for m in memories if m.current]
        for user, memories in all_memories(load(name)).items()
    }


def score(split: Split, memories: dict[str, list[Memory]]) -> Scores:
    """Precision and recall of the candidates against the labels, per kind."""
    scores = Scores()
    expected = Counter((label.event_id, label.kind) for label in split.labels)
    found = Counter(
        (source, m.kind) for ms in memories.values() for m in ms for source in m.sources
    )
    for event_id, kind in expected | found:
        hit = min(expected[(event_id, kind)], found[(event_id, kind)])
        scores.true_positives[kind] += hit
        scores.false_positives[kind] += found[(event_id, kind)] - hit
        scores.false_negatives[kind] += expected[(event_id, kind)] - hit
    return scores


def _word_f1(found: str, expected: str) -> float:
    a, b = Counter(subjects.words(found)), Counter(subjects.words(expected))
    common = sum((a & b).values())
    return 0.0 if not common else 2 * common / (sum(a.values()) + sum(b.values()))


def statement_agreement(split: Split, memories: dict[str, list[Memory]]) -> float | None:
    """The mean word F1 between each right memory's statement and its label's: how
    close the miner's wording is to what a person would keep (1.0: the same words)."""
    labelled = {(label.event_id, label.kind): label.statement for label in split.labels}
    figures = [
        _word_f1(m.statement, labelled[(source, m.kind)])
        for ms in memories.values()
        for m in ms
        for source in m.sources
        if (source, m.kind) in labelled
    ]
    return sum(figures) / len(figures) if figures else None


def answered(split: Split, memories: dict[str, list[Memory]], question: Question) -> bool:
    """Whether the question's expected memory is the single current one on its topic."""
    on_topic = {label.event_id for label in split.labels if label.topic == question.topic}
    mine_ = [m for m in memories[question.user] if on_topic.intersection(m.sources)]
    current = [m for m in mine_ if m.current]
    return len(current) == 1 and (
        question.expected_event_id in current[0].sources
        and current[0].kind == question.expected_kind
    )


def _missed(split: Split, memories: dict[str, list[Memory]], question: Question) -> str:
    """A missed question, with the current memories on its topic and their subjects."""
    on_topic = {label.event_id for label in split.labels if label.topic == question.topic}
    current = [m for m in memories[question.user] if m.current and on_topic & set(m.sources)]
    shown = "; ".join(f"{m.kind} `{m.subject}` {m.statement!r}" for m in current) or "none"
    return f"{question.user}, {question.question!r}: current on it: {shown}"


@dataclass(frozen=True)
class Result:
    split: str
    turns: int
    user_turns: int
    labels: int
    scores: Scores
    wording: float | None
    questions: int
    answered: int
    misses: list[str]

    @property
    def current_share(self) -> float:
        return self.answered / self.questions if self.questions else 0.0


def evaluate(name: str) -> Result:
    split = load(name)
    memories = all_memories(split)
    results = [(q, answered(split, memories, q)) for q in split.questions]
    every = [t for ts in split.turns.values() for t in ts]
    return Result(
        split=name,
        turns=len(every),
        user_turns=sum(t.type == "user_message" for t in every),
        labels=len(split.labels),
        scores=score(split, memories),
        wording=statement_agreement(split, memories),
        questions=len(results),
        answered=sum(ok for _, ok in results),
        misses=[_missed(split, memories, q) for q, ok in results if not ok],
    )


def _figure(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def table(results: Sequence[Result]) -> str:
    """A Markdown table: one row per kind and one over all kinds, a column pair per split."""
    header = "| kind | " + " | ".join(
        f"{r.split} labels | {r.split} precision | {r.split} recall" for r in results
    )
    lines = [header + " |", "|---" * (1 + 3 * len(results)) + "|"]
    kinds = [k for k in KINDS if any(r.scores.recall(k) or r.scores.precision(k) for r in results)]
    for kind in (*kinds, None):
        cells = [
            f"{r.scores.labelled(kind)} | {_figure(r.scores.precision(kind))} | "
            f"{_figure(r.scores.recall(kind))}"
            for r in results
        ]
        lines.append(f"| {kind or '**all kinds**'} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def turns_per_second(names: Sequence[str] = SPLITS, *, rounds: int = 20) -> float:
    """How many turns `mine` reads a second, the splits' turns mined `rounds` times: the
    best of three runs, as the machine is shared."""
    turns = [t for name in names for ts in load(name).turns.values() for t in ts] * rounds
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        mine(turns)
        best = min(best, time.perf_counter() - started)
    return len(turns) / best


def _searched_lines(searched: Sequence["Searched"]) -> list[str]:
    if not searched:
        return ["The search's figure (`bench.memory_current`) was not measured in this run.", ""]
    model = ", ".join(sorted({s.model for s in searched}))
    shares = ", ".join(f"{s.split} {s.answered}/{s.questions} ({s.share:.2f})" for s in searched)
    kept = "; ".join(f"{s.split} {s.memories} ({s.current} current)" for s in searched)
    return [
        "On a real node (`bench.memory_current`): each conversation stored as one user's "
        "events on an alias of its own, session after session, each followed by a "
        "`consolidate` pass over that user (`Consolidator.run`), then each question asked "
        f"through the memories search (`memories search`, statements and questions embedded "
        f"with {model}). Memories kept: {kept}. Questions whose first hit is the expected "
        f"current memory: {shares}. Missed, with what came first:",
        "",
        *(f"- {s.split}: {miss}" for s in searched for miss in s.misses),
        "",
        "    python -m bench.memory_current --split dev",
        "",
    ]


def report(results: Sequence[Result], searched: Sequence["Searched"] = ()) -> str:
    sizes = "; ".join(
        f"{r.split}: {r.turns} turns ({r.user_turns} the user's), {r.labels} labelled memories, "
        f"{r.questions} questions"
        for r in results
    )
    shares = ", ".join(
        f"{r.split} {r.answered}/{r.questions} ({r.current_share:.2f})" for r in results
    )
    return "\n".join(
        [
            START,
            "## Kept memories: the built-in miner",
            "",
            f"The built-in English miner (`{MINER_VERSION}`, `indexer/enrichment/miner.py`) "
            "and superseding (`superseding.py`) on the labelled set of "
            "`bench/data/memories/` (" + sizes + "). The held-out conversations were "
            "written with the dev ones, before the miner, and are never used for tuning. "
            "Targets: precision ≥ 0.9 and recall ≥ 0.8 over all kinds.",
            "",
            "    python -m bench.memory_mining --report BENCHMARKS.md",
            "",
            table(results),
            "",
            "The statements' wording against the labels' (mean word F1 over the right "
            "memories): " + ", ".join(f"{r.split} {_figure(r.wording)}" for r in results) + ".",
            "",
            f"`mine` reads {turns_per_second():,.0f} turns a second (both splits' turns, 20 "
            "times over, the best of three runs in one process: half of them are the user's).",
            "",
            '"What is the current X" questions whose expected memory is the single current '
            f"one on X after the passes: {shares}. Missed, with the current memories on X "
            "and their subjects:",
            "",
            *(f"- {r.split}: {miss}" for r in results for miss in r.misses),
            "",
            *_searched_lines(searched),
            END,
            "",
        ]
    )


def kept_section(document: str) -> str | None:
    """This harness's section of an existing report, if any (`bench.run` keeps it)."""
    return sections.kept(document, start=START, end=END)


def replace_section(document: str, text: str) -> str:
    return sections.replace(document, text, start=START, end=END)


def _print(result: Result) -> None:
    print(table([result]))
    print(f"statement wording (word F1): {_figure(result.wording)}")
    print(
        f"current X: {result.answered}/{result.questions} ({result.current_share:.2f})",
        *(f"  missed: {miss}" for miss in result.misses),
        sep="\n",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=SPLITS, default="dev")
    parser.add_argument("--report", type=Path, help="write both splits' section into this file")
    parser.add_argument("--show", action="store_true", help="print every memory mined")
    parser.add_argument("--es-url", default=None, help="the node for --report's search figure")
    parser.add_argument(
        "--no-search", action="store_true", help="--report without the search's figure (no node)"
    )
    args = parser.parse_args(argv)
    if args.report is not None:
        results = [evaluate(name) for name in SPLITS]
        searched: list[Searched] = []
        if not args.no_search:
            from bench.memory_current import measure_splits  # it imports this module
            from session_recall.config import Settings

            settings = (
                Settings() if args.es_url is None else Settings(ELASTICSEARCH_URL=args.es_url)
            )
            searched = measure_splits(settings)
        document = args.report.read_text(encoding="utf-8") if args.report.exists() else ""
        section = report(results, searched)
        args.report.write_text(replace_section(document, section), encoding="utf-8")
        for result in results:
            print(f"{result.split}:")
            _print(result)
        for found in searched:
            print(f"{found.split} search: {found.answered}/{found.questions} ({found.share:.2f})")
        return 0
    result = evaluate(args.split)
    if args.show:
        for user, memories in all_memories(load(args.split)).items():
            for m in memories:
                state = "current" if m.current else f"superseded by {m.superseded_by}"
                print(f"{user} {m.sources[0]} {m.kind:<11} [{m.subject}] {m.statement} ({state})")
    _print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
