"""The built-in miner: what a user's own turns say to keep, found by English rules.

No model: each sentence of a user turn is matched against a few phrasings, and kept
only when it is said plainly, by the user, about the user's own affairs:

- **corrections** (`correction`): "actually, …", "no, I meant …", "correction: …",
  "not X but Y";
- **explicit requests** (`instruction`): "remember that …", "please remember …",
  "don't forget …", "note that …";
- **decisions** (`decision`): "we decided …", "let's go with …", "we'll use …",
  "we agreed …", "we chose …";
- **preferences** (`preference`): "I prefer …", "I'm allergic to …", "always …" /
  "never …" said as a rule.

A decision that names no subject takes the one its user's previous turn asked about
("did we decide on the colour scheme yet?", then "we decided to go with sage green and
cream": "Use sage green and cream for the colour scheme"), so that the question a
later reader asks finds it.

A correction that restates one of the others ("Actually, let's go with MySQL for
billing") keeps the kind of what it restates, with `corrects` set: it is a decision,
and replaces the older decision on its subject. A bare correction ("Actually, the rent
is due on the 1st") is of kind `correction`.

Nothing fires on questions, hypotheticals ("what if we chose …", "if I preferred …"),
hedges ("maybe we'll use …"), reported speech ("she said we decided …", "he told me to
remember …"), acknowledgements ("actually, that's fine") or a pronoun for the thing
chosen ("let's go with that"), which names nothing a later reader could use.

`mine` is pure and deterministic: the same turns give the same candidates, in turn
order, each naming the one event it came from. Only user turns are mined
(`USER_TYPES`): what the assistant says is not the user's word.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from session_recall.indexer.enrichment import subjects

MINER_VERSION = "en-2"
Kind = Literal["decision", "correction", "instruction", "preference", "fact"]
# The event types of the user's own turns (the adapters store `user_message`).
USER_TYPES = frozenset({"user_message", "user"})


@dataclass(frozen=True)
class Turn:
    event_id: str
    timestamp: datetime
    type: str
    text: str
    session_id: str


@dataclass(frozen=True)
class Candidate:
    """A memory the miner proposes: short and standalone, from its source events."""

    kind: Kind
    statement: str
    subject: str | None
    sources: tuple[str, ...]
    # A correction of what came before: it supersedes on the same subject.
    corrects: bool


@dataclass(frozen=True)
class _Found:
    kind: Kind
    statement: str
    subject: str | None
    corrects: bool = False


_I = re.IGNORECASE
# Sentences end at . ! ? followed by a space, except after a title ("Mrs. Okafor").
_SENTENCE_END = re.compile(r"(?<!\bMrs\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<=[.!?])\s+")
# What a sentence may open with before what it says.
_FILLER = re.compile(
    r"^(?:(?:ok|okay|so|oh|also|and|but|hey|well|yes|yeah|right|hmm+|um+|btw|"
    r"by the way|one more thing|alright|all right|great|cool|good)\b[,!]?\s+)+",
    _I,
)
_TOPIC = re.compile(r"^for (?P<topic>[\w' -]+?)(?:,\s*|\s+(?=we\b|let's\b|i\b))", _I)
_QUESTION_OPENING = re.compile(
    r"^(?:do|does|did|should|would|could|can|is|are|was|were|which|what|how|when|where|"
    r"why|who|shall|will|have|has)\b",
    _I,
)
# Said before a signal, these make it someone else's word, a supposition or a doubt.
_REPORTED = re.compile(
    r"\b(?:said|says|say|told|tells|tell|mentioned|mentions|thinks|thought|claims|"
    r"claimed|wrote|writes|asked|heard|reckons|according to|suggested|insists)\b",
    _I,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|what if|suppose|supposing|imagine|assuming|in case|unless|whether|"
    r"hypothetically|wonder)\b",
    _I,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|could|i think|i guess|not sure)\b", _I
)
_HEDGE_AFTER = re.compile(r"^\s*(?:probably|maybe|perhaps|possibly)\b", _I)
# "Actually, that's fine": the user agrees, nothing is corrected.
_ACKNOWLEDGEMENT = re.compile(
    r"^(?:that'?s|that is|that was|that works|this works|it works|it'?s fine|thanks|"
    r"thank you|cheers|no worries|no problem|never ?mind|you'?re right|you are right|"
    r"i'?m not sure|i am not sure|i don'?t know|i'?m fine|great|fine|ok|okay|cool|"
    r"perfect|nice|good|wait|hmm|sure|yes|yeah|no\b|same|me too|i have (?:a|another) "
    r"question|i was wondering|forget it)",
    _I,
)
# What a choice that names nothing looks like: "let's go with that".
_NAMES_NOTHING = re.compile(
    r"^(?:that|this|it|them|those|these|yours|your (?:suggestion|idea|plan|pick)|the flow|"
    r"whatever|either|both|the (?:first|second|third|last|other|same) "
    r"(?:one|option|choice)|the other|option \w+)\b",
    _I,
)
_CORRECTION = re.compile(
    r"^(?:actually|correction|(?P<meant>(?:no|sorry|oops)[,.]?\s+i meant)|no wait|wait,? no)"
    r"\s*[,:;-]?\s*(?P<rest>.+)$",
    _I,
)
_NOT_BUT = re.compile(r"^(?P<pre>.*?)\bnot (?P<x>[^,]+?),? but (?:rather )?(?P<y>.+)$", _I)
_NOT_BUT_IDIOM = re.compile(
    r"^(?:only|just|much|bad|sure|certain|quite|exactly|too|a big deal|that|so|very|"
    r"really|yet)\b",
    _I,
)
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:also\s+)?(?:remember|note|don'?t forget|do not forget|never forget)"
    r"(?:\s+(?:that|this))?\s*[,:]?\s+(?P<x>.+)$",
    _I,
)
_REMEMBER_NOT_A_FACT = re.compile(
    r"^(?:when|how|what|where|who|why|which|if|whether|down|it|please|me|the (?:film|movie|"
    r"time|day|book|song))\b",
    _I,
)
_FORGET_TAIL = re.compile(r"^(?P<x>.+?),?\s+(?:please\s+)?(?:don'?t|do not) forget$", _I)
_DECIDED = re.compile(
    r"^(?:we|i)\s+(?:have\s+|'ve\s+|’ve\s+|all\s+|finally\s+|just\s+)?"
    r"(?P<verb>decided|agreed|chose|chosen|picked|settled)\b\s*(?P<x>.*)$",
    _I,
)
_USE = re.compile(
    r"^(?:let'?s|let us|we'?ll|we will|we'?re going to|we are going to|we'?re going|"
    r"we are going)\s+(?:go with|use|going with|stick with|switch to)\s+(?P<x>.+)$",
    _I,
)
_PREFER = re.compile(
    r"^i\s*(?:'d|would)?\s+(?:really\s+|much\s+|also\s+|still\s+)?prefer\s+(?P<x>.+)$", _I
)
_ALLERGIC = re.compile(
    r"^i\s*(?:'m|am)\s+(?:also\s+|very\s+|severely\s+|quite\s+|mildly\s+)*allergic to\s+"
    r"(?P<x>[^,;]+)",
    _I,
)
_RULE = re.compile(r"^(?:please\s+)?(?P<adverb>always|never)\s+(?P<x>.+)$", _I)
# "Always happy to help", "never again": an adverb, not a rule the user sets.
_NOT_A_RULE = re.compile(
    r"^(?:mind|again|ever|before|once|really|knew|know|happy|glad|nice|good|great|fun|"
    r"keen|ready|here|there|worth|welcome|been|was|is|a|an|the|so|too|thought)\b",
    _I,
)
_NOT_SAID = re.compile(r"^not to (?:say|answer|comment|discuss|tell|talk)\b", _I)
_TO_DO = re.compile(r"^(?:not\s+)?to\s+(?P<x>.+)$", _I)
_WHEN_YOU = re.compile(r"^it when (?:you|we|they|people)\s+\S+\s+", _I)
# A fact that is a pronoun, or about one: "note that this is a draft".
_DEICTIC = re.compile(r"^(?:this|that|it|these|those|they|about (?:me|it|this|that|us|them))\b", _I)
_ALTERNATIVE = re.compile(r"\s+(?:over|to|rather than|instead of|more than)\s+", _I)
_FIRST_PERSON = re.compile(r"^(?:i|we)\s+(?P<rest>.+)$", _I)
_TAIL_NOT = re.compile(r",\s*not\s+[^,]+(?:,[^,]*)?$", _I)
_TAIL_TOO = re.compile(r"\s+(?:too|as well|also|now|instead|oddly)$", _I)
# Asides that end a sentence and say nothing of its memory.
_ASIDE = re.compile(r",?\s+(?:by the way|btw|please|thanks|thank you|if that helps)$", _I)
_FOR = re.compile(r"\s(?:for|on)\s+(?P<y>[^,]+)", _I)
_VALUE_VERB = re.compile(r"^(?:use|go with|choose|pick|adopt|switch to|stick with)\s+", _I)
_MY_FACT = re.compile(r"^(?:my|our)\s+(?=[\w' -]+\s(?:is|are)\b)", _I)
# A question that asks for a decision, and what it is about: "did we decide on the
# colour scheme yet?", "which venue should we pick?".
_ASKED_ON = re.compile(
    r"\b(?:decide|decided|agree|agreed|settle|settled|choose|chose|pick|picked)\s+"
    r"(?:on|about|upon)\s+(?P<topic>[\w' -]+?)(?:\s+(?:yet|already|now|then))?\s*\?$",
    _I,
)
_ASKED_WHICH = re.compile(
    r"^(?:which|what)\s+(?P<topic>[\w' -]+?)\s+(?:should|shall|did|do|will|are|have)\s+"
    r"(?:we|i)\b.*\?$",
    _I,
)
_ARTICLE = re.compile(r"^(?:the|a|an|our|my|your|this|that)\s+", _I)
_ASKED_NOTHING = frozenset({"else", "kind", "sort", "other", "one", "ones"})


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def _capitalised(text: str) -> str:
    text = _ASIDE.sub("", text.strip().rstrip(".!;, "))
    return text[:1].upper() + text[1:]


def _said_plainly(before: str) -> bool:
    """Nothing before the signal makes it reported, supposed or doubted."""
    return not (_REPORTED.search(before) or _HYPOTHETICAL.search(before) or _HEDGE.search(before))


def _statement_subject(statement: str) -> str | None:
    """The subject of a statement that is a clause of its own, or of an imperative."""
    found = subjects.clause_subject(statement)
    if found is not None:
        return found
    first_person = _FIRST_PERSON.match(statement)
    if first_person:
        # "I live in Leeds": what the user states of themselves, named by its verb.
        verb, _, rest = first_person["rest"].partition(" ")
        return subjects.key(f"{verb} {subjects.head(rest) or ''}")
    verb, _, rest = statement.partition(" ")
    if not rest or subjects.key(verb) is None:
        return None  # "It ...": a pronoun, not an imperative's verb
    return subjects.key(subjects.noun_phrase(rest))


def asked_about(text: str) -> str | None:
    """What a user turn's last question asks to be decided ("did we decide on the
    colour scheme yet?": "colour scheme"), or None."""
    return _asked_in(_sentences(text)) if "?" in text else None


def _asked_in(sentences: Sequence[str]) -> str | None:
    for sentence in reversed(sentences):
        question = _FILLER.sub("", sentence.strip())
        found = _ASKED_ON.search(question) or _ASKED_WHICH.match(question)
        if found is None:
            continue
        topic = _ARTICLE.sub("", found["topic"].strip()).strip()
        if topic and topic.lower() not in _ASKED_NOTHING and subjects.key(topic) is not None:
            return topic
    return None


def _shares_word(value: str, topic: str) -> bool:
    return bool(set(value.lower().split()) & set(topic.lower().split()))


def _use(value: str, topic: str | None, asked: str | None) -> _Found | None:
    """A choice: "go with X (for Y)". `asked`: what the user's previous turn asked to
    decide, the topic when the choice names none and shares no word with it."""
    value = _TAIL_TOO.sub("", value.strip().rstrip(".!"))
    if not value or _NAMES_NOTHING.match(value) or _HEDGE_AFTER.match(value):
        return None
    on = _FOR.search(" " + value)
    if topic is None and on is None and asked and not _shares_word(value, asked):
        topic = "the " + asked
    statement = "Use " + value + (f" for {topic}" if topic else "")
    subject = subjects.key(topic or (on["y"] if on else "")) or subjects.head(value)
    return _Found("decision", statement, subject)


def _decided(verb: str, rest: str, topic: str | None, asked: str | None) -> _Found | None:
    rest = rest.strip().rstrip(".!")
    lowered = rest.lower()
    if not rest or lowered.startswith(("to disagree", "nothing", "not ", "against")):
        return None
    if lowered.startswith("to "):
        action = rest[3:]
        if _VALUE_VERB.match(action):
            return _use(_VALUE_VERB.sub("", action, count=1), topic, asked)
        statement = _capitalised(action)
        return _Found("decision", statement, _statement_subject(statement))
    if lowered.startswith("that "):
        statement = _capitalised(rest[5:])
        return _Found("decision", statement, _statement_subject(statement))
    if lowered.startswith(("on ", "upon ")):
        value = rest.split(" ", 1)[1] if " " in rest else ""
        found = _use(value, topic, asked)
        return (
            None
            if found is None
            else _Found("decision", "Go with" + found.statement[3:], found.subject)
        )
    return _use(rest, topic, asked) if verb.lower() in ("chose", "chosen", "picked") else None


def _decision(clause: str, topic: str | None, asked: str | None) -> _Found | None:
    decided = _DECIDED.match(clause)
    if decided:
        return _decided(decided["verb"], decided["x"], topic, asked)
    use = _USE.match(clause)
    return _use(use["x"], topic, asked) if use else None


def _instruction(clause: str) -> _Found | None:
    remember = _REMEMBER.match(clause)
    if remember:
        fact = remember["x"]
    else:
        tail = _FORGET_TAIL.match(clause.rstrip(".! "))
        if not tail or not _said_plainly(tail["x"]):
            return None
        fact = tail["x"]
    if _REMEMBER_NOT_A_FACT.match(fact) or _DEICTIC.match(fact) or len(fact.split()) < 2:
        return None
    if fact.lower().startswith("to "):
        fact = fact[3:]
    statement = _capitalised(_MY_FACT.sub("", fact.strip()))
    return _Found("instruction", statement, _statement_subject(statement))


def _preference(clause: str) -> _Found | None:
    allergic = _ALLERGIC.match(clause)
    if allergic:
        allergen = _TAIL_TOO.sub("", allergic["x"].strip().rstrip(".!"))
        key = subjects.key(allergen)
        if key is None:
            return None
        return _Found("preference", f"Allergic to {allergen}", f"allergy {key}")
    prefer = _PREFER.match(clause)
    if prefer:
        liked = prefer["x"].strip().rstrip(".!")
        if _NOT_SAID.match(liked):
            return None
        when_you = _WHEN_YOU.match(liked)
        if when_you is None and _NAMES_NOTHING.match(liked):
            return None
        statement = _capitalised("Prefers " + liked)
        liked_thing = liked[when_you.end() :] if when_you else liked
        to_do = _TO_DO.match(liked_thing)
        if to_do:  # "not to get pinged after 6pm": what is done, not alternatives
            return _Found("preference", statement, subjects.key(subjects.noun_phrase(to_do["x"])))
        options = _ALTERNATIVE.split(liked_thing, maxsplit=1)
        subject = subjects.alternatives(*(subjects.head(_TAIL_TOO.sub("", o)) for o in options))
        return _Found("preference", statement, subject)
    rule = _RULE.match(clause)
    if rule and not _NOT_A_RULE.match(rule["x"]):
        statement = _capitalised(clause[clause.lower().index(rule["adverb"].lower()) :])
        verb, _, rest = rule["x"].partition(" ")
        obj = subjects.head(rest) if rest else None
        return _Found("preference", statement, subjects.key(f"{verb} {obj or ''}"))
    return None


def _correction_of(rest: str, *, meant: bool, asked: str | None) -> _Found | None:
    """What follows "actually," or "correction:": a restated signal, or a fact. Only
    after "I meant" may the fact be a bare noun phrase ("no, I meant the premium
    package"); elsewhere a clause without a subject is a request ("actually, shorten
    it"), not a correction."""
    if _ACKNOWLEDGEMENT.match(rest) or rest.endswith("?"):
        return None
    inner = _signal(rest, asked)
    if inner is not None:
        return _Found(inner.kind, inner.statement, inner.subject, corrects=True)
    if not _said_plainly(rest.split(",", 1)[0]) or len(rest.split()) < 2:
        return None
    statement = _capitalised(_TAIL_NOT.sub("", rest.strip().rstrip(".!")))
    if subjects.clause_subject(statement) is not None or _FIRST_PERSON.match(statement):
        return _Found("correction", statement, _statement_subject(statement), corrects=True)
    if not meant or _NAMES_NOTHING.match(statement):
        return None
    return _Found("correction", statement, subjects.head(statement), corrects=True)


def _not_but(clause: str) -> _Found | None:
    found = _NOT_BUT.match(clause)
    if not found or _NOT_BUT_IDIOM.match(found["x"]) or not found["pre"].strip():
        return None
    if not _said_plainly(found["pre"]):
        return None
    statement = _capitalised(found["pre"].strip() + " " + found["y"].strip())
    return _Found("correction", statement, subjects.clause_subject(statement), corrects=True)


_RULES: tuple[Callable[[str], _Found | None], ...] = (_instruction, _preference)


def _signal(clause: str, asked: str | None) -> _Found | None:
    """The first rule that `clause` (a sentence without its filler) matches."""
    clause = _FILLER.sub("", clause.strip()).strip()
    topic_match = _TOPIC.match(clause)
    topic = topic_match["topic"].strip() if topic_match else None
    if topic_match:
        clause = clause[topic_match.end() :]
    decision = _decision(clause, topic, asked)
    if decision is not None:
        return decision
    for rule in _RULES:
        found = rule(clause)
        if found is not None:
            return found
    return None


def _sentence(sentence: str, asked: str | None) -> _Found | None:
    text = sentence.strip()
    if text.endswith("?") or _QUESTION_OPENING.match(_FILLER.sub("", text)):
        return None
    if '"' in text or "“" in text:
        return None  # quoted words are someone's, not a statement of the user's
    clause = _FILLER.sub("", text).strip()
    correction = _CORRECTION.match(clause)
    if correction:
        return _correction_of(
            correction["rest"].strip(), meant=bool(correction["meant"]), asked=asked
        )
    found = _signal(clause, asked)
    if found is not None:
        return found
    return _not_but(clause)


def mine(turns: Sequence[Turn]) -> list[Candidate]:
    """The candidates in `turns`' user turns, in turn order: pure and deterministic."""
    candidates: list[Candidate] = []
    asked: str | None = None  # what the user's previous turn in this session asked
    session: str | None = None
    for turn in turns:
        if turn.session_id != session:
            asked, session = None, turn.session_id
        if turn.type not in USER_TYPES:
            continue
        sentences = _sentences(turn.text)
        for sentence in sentences:
            found = _sentence(sentence, asked)
            if found is not None and found.statement:
                candidates.append(
                    Candidate(
                        kind=found.kind,
                        statement=found.statement,
                        subject=found.subject,
                        sources=(turn.event_id,),
                        corrects=found.corrects,
                    )
                )
        asked = _asked_in(sentences) if "?" in turn.text else None
    return candidates
