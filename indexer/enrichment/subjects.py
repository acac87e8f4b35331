"""Subjects of kept memories: what a statement is about, as a normalised key.

A subject is what superseding compares (`superseding.same_subject`): "We decided to use
PostgreSQL for billing" and "Let's go with MySQL for billing" are both about `billing`,
so the newer one replaces the older. A key is lower-case words, articles, possessives
and time adverbs dropped, each word singular: "the billing queues" is `billing queue`.
A choice between alternatives ("tabs over spaces") is a key of its alternatives joined
by ` | ` (`space | tab`), each of which is a subject on its own.

Everything here is pure and English-only, rule-based: no model, no word list beyond
the few small ones below.
"""

import re

ALTERNATIVES = " | "


def _vocabulary(*lines: str) -> frozenset[str]:
    return frozenset(" ".join(lines).split())


# Words that carry no subject: articles, possessives, demonstratives, time adverbs.
_DROPPED = _vocabulary(
    "a an the my our your his her their its this that these those of new now current ",
    "currently old also just still anymore instead every each too only never always often ",
    "usually",
)
# A phrase that is only a pronoun names nothing that a later turn could name again.
_PRONOUNS = _vocabulary(
    "i me we us you it they them he she him this that these those something anything ",
    "everything nothing one",
)
# Where a noun phrase ends: prepositions and conjunctions.
_PHRASE_END = _vocabulary(
    "for on in at to from by with over under rather than instead before after until ",
    "during about into onto because so but and or as since when while if unless per ",
    "via than",
)
# Verbs that end a clause's subject ("the ceremony starts at 4pm": `ceremony`). A
# statement's subject is the noun phrase before the first of them.
_VERBS = _vocabulary(
    "is are was were am be been 's 're will would can must should shall may ",
    "starts start begins begin ends end closes close opens open plays play sells sell ",
    "needs need has have had lives live works work runs run costs cost lands land ",
    "leaves leave arrives arrive takes take goes go comes come doesn't don't isn't ",
    "aren't won't can't moved changed stays stay gets get happens happen",
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'.-]*[a-z0-9]|[a-z0-9]")


def _singular(word: str) -> str:
    # Naive on purpose: "queues" and "queue" must meet; "address" and "status" stay.
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """The lower-case words of a text, possessives cut ("BoxCo's" is `boxco`)."""
    lowered = text.lower().replace("’", "'")
    found = [w.removesuffix("'s") for w in _WORD.findall(lowered)]
    return [w.strip("'.") for w in found if w.strip("'.")]


def key(phrase: str) -> str | None:
    """The normalised key of a noun phrase, or None when it names nothing."""
    kept = [_singular(w) for w in words(phrase) if w not in _DROPPED]
    if not kept or all(w in _PRONOUNS for w in kept):
        return None
    return " ".join(kept)


def noun_phrase(text: str) -> str:
    """The words of `text` up to the first preposition or punctuation mark."""
    first = re.split(r"[,;:()]| - | — ", text, maxsplit=1)[0]
    kept: list[str] = []
    for word in first.split():
        if word.lower().strip(".!") in _PHRASE_END:
            break
        kept.append(word)
    return " ".join(kept)


def head(text: str) -> str | None:
    """The key of the head noun of the noun phrase that `text` starts with: "a navy
    logo in the end" is `logo`."""
    phrase = key(noun_phrase(text))
    return None if phrase is None else phrase.split()[-1]


def clause_subject(clause: str) -> str | None:
    """The key of a clause's grammatical subject, the noun phrase before its first
    verb ("the rent is due on the 1st now": `rent`), or None when there is none, or
    it is a pronoun ("I have a knee injury")."""
    before: list[str] = []
    for word in clause.split():
        bare = word.lower().strip(",.;:!")
        if bare in _VERBS or bare.endswith("n't"):
            break
        before.append(word)
    else:
        return None
    if not before:
        return None
    return key(noun_phrase(" ".join(before)))


def alternatives(*phrases: str | None) -> str | None:
    """A key naming a choice between alternatives, each a key (None ones dropped)."""
    kept = sorted({p for p in phrases if p})
    return ALTERNATIVES.join(kept) if kept else None
