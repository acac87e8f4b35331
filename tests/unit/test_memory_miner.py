"""The built-in miner: what each rule keeps from a user's turn, and what never fires."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_recall.indexer.enrichment.miner import USER_TYPES, Candidate, Turn, asked_about, mine
from session_recall.indexer.enrichment.superseding import Current, superseded_by

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def turn(text: str, event_id: str = "e1", type_: str = "user_message", session: str = "s1"):
    return Turn(event_id=event_id, timestamp=START, type=type_, text=text, session_id=session)


def only(text: str) -> Candidate:
    found = mine([turn(text)])
    assert len(found) == 1, found
    return found[0]


# (turn, kind, statement, subject, corrects)
POSITIVES = [
    (
        "We decided to use PostgreSQL for billing.",
        "decision",
        "Use PostgreSQL for billing",
        "billing",
        False,
    ),
    (
        "Actually, let's go with MySQL for billing.",
        "decision",
        "Use MySQL for billing",
        "billing",
        True,
    ),
    (
        "We'll use Go for the billing API.",
        "decision",
        "Use Go for the billing API",
        "billing api",
        False,
    ),
    (
        "We agreed that the DJ plays only after dinner.",
        "decision",
        "The DJ plays only after dinner",
        "dj",
        False,
    ),
    ("We chose a navy logo in the end.", "decision", "Use a navy logo in the end", "logo", False),
    (
        "For the frontend, let's go with Svelte.",
        "decision",
        "Use Svelte for the frontend",
        "frontend",
        False,
    ),
    (
        "Please remember that my badge number is 4417-22.",
        "instruction",
        "Badge number is 4417-22",
        "badge number",
        False,
    ),
    (
        "Remember that the guest count is 120.",
        "instruction",
        "The guest count is 120",
        "guest count",
        False,
    ),
    (
        "Don't forget to cancel the old internet contract.",
        "instruction",
        "Cancel the old internet contract",
        "internet contract",
        False,
    ),
    (
        "Note that the ceremony starts at 3pm.",
        "instruction",
        "The ceremony starts at 3pm",
        "ceremony",
        False,
    ),
    (
        "The gate code is 7781, don't forget.",
        "instruction",
        "The gate code is 7781",
        "gate code",
        False,
    ),
    ("I prefer short answers, by the way.", "preference", "Prefers short answers", "answer", False),
    ("I prefer tabs over spaces.", "preference", "Prefers tabs over spaces", "space | tab", False),
    ("I'm allergic to peanuts.", "preference", "Allergic to peanuts", "allergy peanut", False),
    (
        "Always use metric units in recipes.",
        "preference",
        "Always use metric units in recipes",
        "use unit",
        False,
    ),
    (
        "Never book early meetings for me.",
        "preference",
        "Never book early meetings for me",
        "book meeting",
        False,
    ),
    (
        "Correction: the ceremony starts at 4pm.",
        "correction",
        "The ceremony starts at 4pm",
        "ceremony",
        True,
    ),
    (
        "Actually, the parking fee is due on Fridays now.",
        "correction",
        "The parking fee is due on Fridays now",
        "parking fee",
        True,
    ),
    (
        "No, I meant BoxCo's premium package, not the basic one.",
        "correction",
        "BoxCo's premium package",
        "package",
        True,
    ),
    (
        "The deadline is not July 15 but July 29.",
        "correction",
        "The deadline is July 29",
        "deadline",
        True,
    ),
]

NEGATIVES = [
    "Actually, that's fine.",
    "Actually, that's fine, I'll decide tomorrow.",
    "Actually, thanks, that was lovely.",
    "Actually, you're right about the cache.",
    "Actually, I'm not sure the schema was final.",
    "Do you remember the film?",
    "Do you remember the film we talked about, the one with the submarine?",
    "Remember when we tried Elm? What a mess.",
    "I don't remember if the deposit was 900 or 1,000.",
    "I can't remember the sudo password.",
    "She said we decided to use Kafka for events.",
    "He told me to remember the invoice template change.",
    "My coach told me to never run two days in a row.",
    "My partner said let's go with a green logo.",
    "Someone mentioned we'll use Tableau.",
    "Should we go with Kafka or RabbitMQ?",
    "Which do you prefer, lentils or chickpeas?",
    "Did we decide on the colour scheme yet?",
    "What if we chose a string quartet instead of a DJ?",
    "If we decided to open on Mondays, we would need more staff.",
    "Suppose we chose a purely qualitative design.",
    "Maybe we'll use Supabase, I need to check with security.",
    "We agreed to disagree on the logo.",
    "Let's go with that.",
    "Let's go with the flow and see what breaks.",
    "Note that down, please.",
    "Never mind.",
    "I always forget to buy herbs.",
    "I never know how fast to go on easy days.",
    "It's not much but it's a start.",
    "It's not only the sample size but also the age range.",
    "I'm not sure, but I think the cake tasting is on Saturday.",
    'He wrote "remember that the door code is 1234" on the board.',
]


@pytest.mark.parametrize(("text", "kind", "statement", "subject", "corrects"), POSITIVES)
def test_each_rule_keeps_a_short_standalone_statement_and_its_subject(
    text, kind, statement, subject, corrects
):
    found = only(text)
    assert (found.kind, found.statement, found.subject, found.corrects) == (
        kind,
        statement,
        subject,
        corrects,
    )
    assert found.sources == ("e1",)


@pytest.mark.parametrize("text", NEGATIVES)
def test_nothing_fires_on_acknowledgements_questions_reported_speech_or_hypotheticals(text):
    assert mine([turn(text)]) == []


def test_only_the_users_own_turns_are_mined():
    said = "We decided to use PostgreSQL for billing."
    assert mine([turn(said, type_="assistant_message"), turn(said, type_="tool_call")]) == []
    assert len(mine([turn(said, type_="user_message")])) == 1


def test_each_sentence_of_a_turn_is_mined_on_its_own():
    found = mine([turn("Legal signed off. We decided to use Stripe for payments. Thanks!")])
    assert [c.statement for c in found] == ["Use Stripe for payments"]


def test_a_title_does_not_end_a_sentence():
    assert only("Remember that my dentist is Dr. Patel on Hill Street.").statement == (
        "Dentist is Dr. Patel on Hill Street"
    )


def test_a_week_later_correction_leaves_the_mysql_decision_the_only_current_one():
    first = turn("We decided to use PostgreSQL for billing.", "e1")
    later = Turn(
        event_id="e2",
        timestamp=START + timedelta(days=7),
        type="user_message",
        text="Actually, let's go with MySQL for billing.",
        session_id="s2",
    )
    (postgres,) = mine([first])
    (mysql,) = mine([later])
    current = [Current("m1", postgres.kind, postgres.subject, postgres.statement, START)]
    assert superseded_by(mysql, current) == ["m1"]
    assert (mysql.kind, mysql.statement, mysql.sources) == (
        "decision",
        "Use MySQL for billing",
        ("e2",),
    )


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("Did we decide on the colour scheme yet?", "colour scheme"),
        ("So, have we settled on a caterer?", "caterer"),
        ("Which venue should we pick?", "venue"),
        ("Ok. Which font did we choose? Thanks", "font"),
        ("What else do we need?", None),
        ("What time is it?", None),
        ("We decided on the venue.", None),
    ],
)
def test_a_question_that_asks_for_a_decision_names_its_topic(question, topic):
    assert asked_about(question) == topic


def test_a_decision_that_names_nothing_takes_the_topic_the_previous_turn_asked_about():
    asked = turn("Did we decide on the colour scheme yet?", "e1")
    answer = turn("Not yet, shall I list options?", "e2", type_="assistant_message")
    decided = turn("We decided to go with sage green and cream.", "e3")
    (found,) = mine([asked, answer, decided])
    assert (found.statement, found.subject, found.sources) == (
        "Use sage green and cream for the colour scheme",
        "colour scheme",
        ("e3",),
    )


def test_the_asked_topic_holds_for_the_next_user_turn_of_the_same_session_only():
    asked = turn("Did we decide on the colour scheme yet?", "e1")
    decided = "We decided to go with sage green and cream."
    elsewhere = mine([asked, turn(decided, "e2", session="s2")])
    later = mine([asked, turn("Hmm, let me think.", "e2"), turn(decided, "e3")])
    named = mine([asked, turn("Let's go with cream for the invitations.", "e2")])
    assert [c.statement for c in elsewhere + later] == ["Use sage green and cream"] * 2
    assert [c.statement for c in named] == ["Use cream for the invitations"]


# Hypothesis: the invariants hold on any mix of turns.
CLAUSES = [text for text, *_ in POSITIVES]
REPORTERS = ["She", "He", "My manager", "The lead", "Someone on the team", "They"]
FRAMES = [
    "{who} said {clause}",
    "{who} told me: {clause}",
    "{who} mentioned that {clause}",
    "What if {clause}?",
    "If {clause}, what would change?",
    "Suppose {clause}",
    "Do you think {clause}?",
    "Is it true that {clause}?",
    'I read "{clause}" somewhere.',
]


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


negatives = st.builds(
    lambda frame, who, clause: frame.format(
        who=who, clause=_lower_first(clause.rstrip(".")).replace(". ", ", ")
    ),
    st.sampled_from(FRAMES),
    st.sampled_from(REPORTERS),
    st.sampled_from(CLAUSES),
) | st.sampled_from(NEGATIVES)
texts = st.sampled_from(CLAUSES) | negatives | st.text(max_size=120)
turns = st.lists(
    st.builds(
        lambda i, type_, text: turn(text, event_id=f"e{i}", type_=type_),
        st.integers(0, 50),
        st.sampled_from(["user_message", "assistant_message", "tool_call", "system"]),
        texts,
    ),
    max_size=12,
)


@given(turns)
def test_mining_is_deterministic_and_names_only_user_turns_it_was_given(given_turns):
    found = mine(given_turns)
    assert found == mine(list(given_turns))
    user_ids = {t.event_id for t in given_turns if t.type in USER_TYPES}
    for candidate in found:
        assert candidate.sources and set(candidate.sources) <= user_ids
        assert candidate.statement.strip()


@given(st.lists(negatives, min_size=1, max_size=6))
def test_reported_supposed_and_asked_signals_never_fire(sentences):
    assert mine([turn(text, event_id=f"e{i}") for i, text in enumerate(sentences)]) == []


@given(st.lists(texts, max_size=8))
def test_nothing_the_assistant_says_is_mined(sentences):
    said = [turn(t, event_id=f"e{i}", type_="assistant_message") for i, t in enumerate(sentences)]
    assert mine(said) == []
