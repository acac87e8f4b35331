"""The order in which the memories search returns what it found: pure.

A question such as "which citation style do we use?" names a subject. Superseding
decides on subjects when a memory is saved, and misses a newer statement whose subject
key shares no word with the older one's ("use APA 7 for citations", subject `citation`,
then "actually, we'll use Chicago style", subject `style`): both stay current. The
search makes up for it when the question names them:

- a current memory whose subject the question names (every stem of the subject key, or
  of one of its alternatives `a | b`, is among the question's stems) has
  `SUBJECT_WEIGHT` added to its relevance (the fused score, from 0 to 1) per word named;
- a current memory of the kind the question asks for ("what did we decide …?": a
  decision; "what do I prefer …?": a preference) has `KIND_WEIGHT` added;
- the memories the question names take the places they reached so, the most specific
  first (more words named), then the newest (`validFrom`): what the user said last
  about what was asked holds now;
- history (superseded or retired memories, when asked for) comes after every current
  memory, by relevance: a superseded memory never outranks what holds now.

Ties keep the order of relevance (the fused rankings).
"""

from collections.abc import Sequence

from session_recall.core.kept_memories import Memory
from session_recall.core.stems import stems

# How a subject key lists alternatives ("space | tab"), as the miner writes them.
_ALTERNATIVES = "|"
# Measured on the dev split of the labelled set (bench.memory_current): 0.4 to 0.5
# answer 22 of 24 with e5-small, 0.5 with the static model too; from 0.7 on, a question
# that names one subject and asks about another ("where do I prefer to run?") is lost.
SUBJECT_WEIGHT = 0.5
# Measured on the same split: 0.25 to 1.0 answer all 24 with e5-small and with the
# static model; without it, "which moving company did I choose?" finds a correction
# about the move before the decision.
KIND_WEIGHT = 0.5
# The words by which a question asks for a kind, as stems.
_ASKS_FOR: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (kind, frozenset(stems(words).split()))
    for kind, words in (
        ("decision", "decide decided decides chose choose chosen pick picked agreed settled opted"),
        ("preference", "prefer prefers preferred favourite allergic"),
    )
)


def asked_kinds(question_stems: set[str]) -> frozenset[str]:
    """The kinds of memory that a question (its stems) asks for by name."""
    return frozenset(kind for kind, words in _ASKS_FOR if words & question_stems)


def named_words(question_stems: set[str], subject: str | None) -> int:
    """How many words of `subject` the question names: those of its longest
    alternative whose stems are all among `question_stems`; 0 when none is."""
    best = 0
    for alternative in (subject or "").split(_ALTERNATIVES):
        wanted = stems(alternative).split()
        if wanted and set(wanted) <= question_stems:
            best = max(best, len(wanted))
    return best


def ordered(question: str, found: Sequence[tuple[Memory, float]]) -> list[Memory]:
    """The memories `found` (each with its relevance, best first) in the order the
    search returns them."""
    asked = set(stems(question).split())
    current = [(n, m, score) for n, (m, score) in enumerate(found) if m.current]
    named = {n: named_words(asked, m.subject) for n, m, _ in current}
    kinds = asked_kinds(asked)

    def score(n: int, memory: Memory, relevance: float) -> float:
        return relevance + SUBJECT_WEIGHT * named[n] + KIND_WEIGHT * (memory.kind in kinds)

    by_score = sorted(current, key=lambda t: (-score(*t), t[0]))
    slots = [i for i, (n, _, _) in enumerate(by_score) if named[n]]
    chosen = sorted(
        (t for t in by_score if named[t[0]]),
        key=lambda t: (-named[t[0]], -t[1].valid_from.nanos, t[0]),
    )
    result = [m for _, m, _ in by_score]
    for slot, (_, memory, _) in zip(slots, chosen, strict=True):
        result[slot] = memory
    return result + [m for m, _ in found if not m.current]


__all__ = ["KIND_WEIGHT", "SUBJECT_WEIGHT", "asked_kinds", "named_words", "ordered"]
