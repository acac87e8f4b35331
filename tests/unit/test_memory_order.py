"""The memories search's order: what the question names the subject of is raised, the
newest and most specific of it first, and history comes after every current memory."""

from session_recall.core.instant import Instant
from session_recall.core.kept_memories import Memory
from session_recall.core.stems import stems
from session_recall.recall.memory_order import asked_kinds, named_words, ordered

DAY = 86_400 * 10**9


def memory(
    n: int,
    statement: str,
    subject: str | None,
    *,
    day: int = 0,
    current: bool = True,
    kind: str = "decision",
):
    return Memory(
        memory_id=f"m{n}", user_id="alice", kind=kind, statement=statement,
        subject=subject, sources=[f"e{n}"], valid_from=Instant(day * DAY + 10**18),
        superseded_by=None if current else "m99",
        valid_to=None if current else Instant(10**18 + 50 * DAY), origin="agent",
    )  # fmt: skip


def ids(found):
    return [m.memory_id for m in found]


def test_a_subject_is_named_when_every_stem_of_one_alternative_is_in_the_question():
    asked = {"citat", "style", "use"}
    assert named_words(asked, "citation") == 1
    assert named_words(asked, "citation style") == 2
    assert named_words(asked, "house style | citation") == 1
    assert named_words(asked, "billing api") == 0
    assert named_words(asked, None) == 0


def test_the_newer_of_two_memories_whose_subjects_the_question_names_comes_first():
    apa = memory(1, "Use APA 7 for citations", "citation", day=0)
    chicago = memory(2, "Use Chicago style, the journal changed its rules", "style", day=7)
    found = ordered("Which citation style do we use?", [(apa, 0.9), (chicago, 0.6)])
    assert ids(found) == ["m2", "m1"]


def test_the_most_specific_subject_comes_before_a_newer_shorter_one():
    go = memory(1, "Use Go for the billing API", "billing api", day=0)
    mysql = memory(2, "Use MySQL for billing", "billing", day=7)
    found = ordered("Which language is the billing API written in?", [(mysql, 1.0), (go, 0.9)])
    assert ids(found) == ["m1", "m2"]


def test_a_named_subject_raises_a_memory_over_a_slightly_more_relevant_one():
    stretching = memory(1, "Add a stretching block after each run", "stretching block", day=7)
    evenings = memory(2, "Use evenings for runs", "run", day=6)
    found = ordered("When do I run?", [(stretching, 1.0), (evenings, 0.7)])
    assert ids(found) == ["m2", "m1"]


def test_a_named_subject_does_not_raise_a_memory_over_a_far_more_relevant_one():
    outdoors = memory(1, "Prefers running outdoors to the treadmill", "outdoor | treadmill")
    evenings = memory(2, "Use evenings for runs", "run", day=6)
    found = ordered("Where do I prefer to run?", [(outdoors, 1.0), (evenings, 0.2)])
    assert ids(found) == ["m1", "m2"]


def test_without_a_named_subject_the_order_of_relevance_is_kept():
    found = [(memory(n, f"statement {n}", f"thing{n}", day=n), 1.0 - n / 10) for n in range(4)]
    assert ids(ordered("what about the weather?", found)) == ["m0", "m1", "m2", "m3"]


def test_history_comes_after_every_current_memory_even_when_named_and_more_relevant():
    old = memory(1, "Use PostgreSQL for billing", "billing", day=0, current=False)
    other = memory(2, "Prefers short answers", "answer", day=1)
    found = ordered("Which database for billing?", [(old, 1.0), (other, 0.1)])
    assert ids(found) == ["m2", "m1"]


def test_a_question_asks_for_a_kind_by_its_verb():
    def asks(question):
        return asked_kinds(set(stems(question).split()))

    assert asks("What did we decide about the cake?") == {"decision"}
    assert asks("Which flavour do I prefer?") == {"preference"}
    assert asks("What is the cake?") == set()


def test_the_kind_asked_for_raises_a_memory_over_a_slightly_more_relevant_other_kind():
    liked = memory(1, "Prefers lemon cake", "cake", kind="preference")
    decided = memory(2, "Use a chocolate cake for the party", "menu")
    found = ordered("What did we decide for the party food?", [(liked, 0.8), (decided, 0.6)])
    assert ids(found) == ["m2", "m1"]
    asked_nothing = ordered("What about food?", [(liked, 0.8), (decided, 0.6)])
    assert ids(asked_nothing) == ["m1", "m2"]
