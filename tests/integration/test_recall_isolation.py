"""Isolation, as a property: whatever the query, no result comes from outside the scope.

One dataset for the module: users, sessions, contacts and inboxes whose ids and texts
look like query syntax (`user_id:bob`, `*`, quotes, backslashes, `OR`, JSON, CJK).
"""

import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from elasticsearch import Elasticsearch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from session_recall.core.instant import Instant
from session_recall.recall import (
    ConversationSearcher,
    CrossConversationSearcher,
    CrossConversationSettings,
    CrossSessionSearcher,
    InvalidPage,
    InvalidQuery,
    RecallPage,
)
from tests.support.events import Event, event, write_events

pytestmark = pytest.mark.integration

KEY = b"isolation-test-cursor-key-32byte"
NOW = Instant.parse("2026-07-01T00:00:00Z")
USERS = ["alice", "bob", "user_id:bob", "用户", 'bob"', "bob\\", "*"]
CONTACTS = ["c1", "c1/i1", "*"]
INBOXES = ["i1", "i2"]
WORDS = [
    "user_id:bob",
    "*",
    '"',
    "\\",
    "OR",
    "AND NOT",
    '{"user_id": "alice"}',
    "中文",
    "决定",
    "alice",
    "bob",
    "we decided",
    "let's go with",
    "session_id:s1",
    "))",
]
# Words that analyze to at least one token, so a text holding one is surely found.
FINDABLE = [w for w in WORDS if any(c.isalnum() for c in w)]


@dataclass(frozen=True)
class Owner:
    user_id: str
    session_id: str
    contact_id: str
    inbox_id: str
    conversation_type: str


def build() -> tuple[list[Event], dict[str, Owner], dict[str, str]]:
    rng = random.Random(20260701)
    events, owners, texts = [], {}, {}
    for u, user in enumerate(USERS):
        for s in range(3):
            # Session ids repeat across users on purpose: only the user tells them apart.
            session = f"s{s}" if s < 2 else f"{user}/s{s}"
            owner = Owner(
                user,
                session,
                rng.choice(CONTACTS),
                rng.choice(INBOXES),
                rng.choice(["chat", "email"]),
            )
            for n in range(8):
                event_id = f"{u}-{s}-{n}"
                text = " ".join(rng.sample(WORDS, rng.randint(1, 4)))
                owners[event_id], texts[event_id] = owner, text
                events.append(
                    event(
                        event_id,
                        user_id=user,
                        session_id=session,
                        timestamp=Instant(NOW.nanos - rng.randrange(10**15)),
                        text=text,
                        contact_id=owner.contact_id,
                        inbox_id=owner.inbox_id,
                        conversation_type=owner.conversation_type,
                    )
                )
    return events, owners, texts


EVENTS, OWNERS, TEXTS = build()


@pytest.fixture(scope="module")
def dataset(es: Elasticsearch, module_alias: str) -> str:
    write_events(es, module_alias, EVENTS)
    return module_alias


ids = st.one_of(
    st.sampled_from([*USERS, "s0", "s1", "c1", "i1"]),
    st.text(min_size=1, max_size=12).filter(str.strip),
)
sessions = st.one_of(st.sampled_from(["s0", "s1", "alice/s2", "bob/s2"]), ids)
terms = st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=15)), min_size=1, max_size=5)


def searcher_for(
    es: Elasticsearch, alias: str, scope: dict[str, str | None]
) -> Callable[..., RecallPage]:
    """The search function of a searcher bound to `scope`, which names its kind."""
    kind = scope["kind"]
    if kind == "cross_session":
        a = CrossSessionSearcher(es, alias=alias, user_id=scope["user"], cursor_key=KEY)
        return lambda query, match, page: a.search(query, match=match, page=page)
    if kind == "conversation":
        b = ConversationSearcher(
            es, alias=alias, user_id=scope["user"], session_id=scope["session"], cursor_key=KEY
        )
        return lambda query, match, page: b.search(query, page=page)
    c = CrossConversationSearcher(
        es,
        alias=alias,
        user_id=scope["user"],
        contact_id=scope["contact"],
        inbox_id=scope["inbox"],
        settings=CrossConversationSettings(enabled=True, lookback_days=365),
        cursor_key=KEY,
        now=lambda: NOW,
    )
    return lambda query, match, page: c.search(
        query, current_session_id=scope["session"], match=match, page=page
    )


def in_scope(scope: dict[str, str | None], owner: Owner) -> bool:
    if scope["kind"] == "cross_session":
        return owner.user_id == scope["user"]
    if scope["kind"] == "conversation":
        return (owner.user_id, owner.session_id) == (scope["user"], scope["session"])
    return (owner.user_id, owner.contact_id, owner.inbox_id) == (
        scope["user"],
        scope["contact"],
        scope["inbox"],
    ) and (owner.conversation_type == "chat" or owner.session_id == scope["session"])


def check_isolation(
    es: Elasticsearch,
    alias: str,
    scope: dict[str, str | None],
    words: list[str],
    match: str,
    page: int,
):
    query = ", ".join(words)
    try:
        result = searcher_for(es, alias, scope)(query, match, page)
    except InvalidQuery:
        return  # e.g. only commas and blanks: refused before any request
    except InvalidPage:
        assert page < 0  # refused before any request: nothing shown at all
        return
    for item in result.items:
        owner = OWNERS[item.event_id]
        assert in_scope(scope, owner), (item, owner)
        assert (item.session_id, item.text) == (owner.session_id, TEXTS[item.event_id])
    # Not vacuous: a findable word that an in-scope event holds is found. A
    # conversation search takes the query whole, as one phrase: a single word then.
    if page == 0 and (match == "any" if scope["kind"] != "conversation" else len(words) == 1):
        held = [
            w
            for w in words
            if w in FINDABLE
            and any(f" {w} " in f" {TEXTS[e]} " for e, o in OWNERS.items() if in_scope(scope, o))
        ]
        if held:
            assert result.items, (query, held)


def _a_held_word() -> tuple[Owner, str]:
    """An event's owner, and a findable word the event holds."""
    for event_id, owner in OWNERS.items():
        for word in FINDABLE:
            if f" {word} " in f" {TEXTS[event_id]} ":
                return owner, word
    raise AssertionError("the dataset holds no findable word")


# Examples run every time: the not-vacuous check above then surely meets a word it finds.
HELD, HELD_WORD = _a_held_word()


SEARCH = {
    "words": terms,
    "match": st.sampled_from(["any", "all"]),
    "page": st.integers(min_value=-1, max_value=2),
}
EXAMPLES = settings(max_examples=30, deadline=None)


@EXAMPLES
@given(user=ids, **SEARCH)
@example(user=HELD.user_id, words=[HELD_WORD], match="any", page=0)
def test_cross_session_search_never_leaves_its_user(es, dataset, user, words, match, page):
    check_isolation(es, dataset, {"kind": "cross_session", "user": user}, words, match, page)


@EXAMPLES
@given(user=ids, session=sessions, **SEARCH)
@example(user=HELD.user_id, session=HELD.session_id, words=[HELD_WORD], match="any", page=0)
def test_conversation_search_never_leaves_its_session(
    es, dataset, user, session, words, match, page
):
    scope = {"kind": "conversation", "user": user, "session": session}
    check_isolation(es, dataset, scope, words, match, page)


@EXAMPLES
@given(
    user=ids,
    contact=st.one_of(st.sampled_from(CONTACTS), ids),
    inbox=st.one_of(st.sampled_from(INBOXES), ids),
    session=sessions,
    **SEARCH,
)
@example(
    user=HELD.user_id,
    contact=HELD.contact_id,
    inbox=HELD.inbox_id,
    session=HELD.session_id,
    words=[HELD_WORD],
    match="any",
    page=0,
)
def test_cross_conversation_search_never_leaves_its_user_contact_and_inbox(
    es, dataset, user, contact, inbox, session, words, match, page
):
    scope = {
        "kind": "cross_conversation",
        "user": user,
        "contact": contact,
        "inbox": inbox,
        "session": session,
    }
    check_isolation(es, dataset, scope, words, match, page)


def test_the_dataset_shares_contacts_and_inboxes_across_users():
    """What makes the cross-conversation property meaningful: the same contact and
    inbox ids under several users."""
    users_by_contact: dict[tuple[str, str], set[str]] = {}
    for owner in OWNERS.values():
        users_by_contact.setdefault((owner.contact_id, owner.inbox_id), set()).add(owner.user_id)
    assert max(len(users) for users in users_by_contact.values()) >= 2
