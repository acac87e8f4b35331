"""Cross-conversation search: every rule of its scope, one test each."""

import uuid

import pytest
from elasticsearch import Elasticsearch

from session_recall.core.instant import Instant
from session_recall.indexer import Scope, erase
from session_recall.recall import CrossConversationSearcher, CrossConversationSettings
from tests.support.events import Event, event, write_events

pytestmark = pytest.mark.integration

KEY = b"cross-conversation-test-key-32b!"
NOW = Instant.parse("2026-07-01T00:00:00Z")
DAY = 86_400 * 10**9
WORD = "refund"


class Contact:
    """A contact of its own per test, in a shared alias, with helpers to write its
    conversations and search them."""

    def __init__(self, es: Elasticsearch, alias: str) -> None:
        self.es, self.alias = es, alias
        self.id = f"contact-{uuid.uuid4().hex[:8]}"
        self.inbox = "inbox-1"
        self.user = f"user-of-{self.id}"

    def conversation(
        self,
        session_id: str,
        *ages: int,
        type: str = "chat",
        inbox: str | None = None,
        contact: str | None = None,
        text: str = f"about my {WORD}",
        user: str | None = None,
        tag: str = "",
    ) -> list[Event]:
        """Write one conversation with a message at each age (nanoseconds before NOW);
        event ids are `{tag}{session_id}-{n}`."""
        events = [
            event(
                f"{tag}{session_id}-{n}",
                user_id=user or self.user,
                session_id=session_id,
                timestamp=Instant(NOW.nanos - age),
                text=text,
                contact_id=contact or self.id,
                inbox_id=inbox or self.inbox,
                conversation_type=type,
            )
            for n, age in enumerate(ages)
        ]
        write_events(self.es, self.alias, events)
        return events

    def found(
        self, current: str | None = "current", user: str | None = None, **settings: object
    ) -> dict[str, list[str]]:
        """Every matching event id, by session, over all pages, as `user` (by default
        the contact's own user) searches."""
        searcher = CrossConversationSearcher(
            self.es,
            alias=self.alias,
            user_id=user or self.user,
            contact_id=self.id,
            inbox_id=self.inbox,
            settings=CrossConversationSettings(**{"enabled": True, **settings}),
            cursor_key=KEY,
            page_size=100,
            now=lambda: NOW,
        )
        by_session: dict[str, list[str]] = {}
        page = searcher.search(WORD, current_session_id=current)
        while True:
            for item in page.items:
                by_session.setdefault(item.session_id, []).append(item.event_id)
            if page.next_cursor is None:
                return by_session
            page = searcher.search(WORD, current_session_id=current, cursor=page.next_cursor)


@pytest.fixture
def contact(es: Elasticsearch, module_alias: str) -> Contact:
    return Contact(es, module_alias)


def test_the_window_edge_is_inclusive(contact):
    contact.conversation("on-the-edge", 200 * DAY, 90 * DAY)
    contact.conversation("just-past-it", 200 * DAY, 90 * DAY + 1)
    assert set(contact.found()) == {"on-the-edge"}
    assert set(contact.found(lookback_days=91)) == {"on-the-edge", "just-past-it"}


def test_at_most_the_200_most_recently_active_conversations(contact):
    events = []
    for k in range(1, 202):  # conversation k last spoke k minutes ago
        events += [
            event(
                f"c{k:03d}-0",
                user_id=contact.user,
                session_id=f"c{k:03d}",
                timestamp=Instant(NOW.nanos - k * 60 * 10**9),
                text=WORD,
                contact_id=contact.id,
                inbox_id=contact.inbox,
                conversation_type="chat",
            )
        ]
    write_events(contact.es, contact.alias, events)
    found = contact.found()
    assert set(found) == {f"c{k:03d}" for k in range(1, 201)}
    assert "c201" not in found
    assert set(contact.found(max_conversations=3)) == {"c001", "c002", "c003"}


@pytest.mark.parametrize(
    ("ages", "kind"),
    [((400 * DAY,), "chat"), ((DAY,), "email"), ((400 * DAY,), "email")],
    ids=["older-than-the-window", "not-chat", "both"],
)
def test_the_current_conversation_is_always_in(contact, ages, kind):
    contact.conversation("current", *ages, type=kind)
    contact.conversation("recent", DAY)
    assert set(contact.found(current="current")) == {"current", "recent"}
    # ... also when the 200 cap is full with more recent ones.
    assert set(contact.found(current="current", max_conversations=1)) == {"current", "recent"}


def test_another_inbox_is_out(contact):
    contact.conversation("here", DAY)
    contact.conversation("elsewhere", DAY, inbox="inbox-2")
    assert set(contact.found()) == {"here"}


def test_another_contact_is_out(contact):
    contact.conversation("mine", DAY)
    contact.conversation("theirs", DAY, contact=f"other-{contact.id}")
    assert set(contact.found()) == {"mine"}


def test_an_erased_conversation_is_out(contact):
    contact.conversation("kept", DAY)
    contact.conversation("erased", 2 * DAY, DAY)
    assert set(contact.found()) == {"kept", "erased"}
    # As `session-recall delete --user U --session S` erases it.
    result = erase(contact.es, contact.alias, Scope.session(contact.user, "erased"))
    assert result.removed == 2
    contact.es.indices.refresh(index=contact.alias)
    assert set(contact.found()) == {"kept"}


def test_a_non_chat_conversation_is_out(contact):
    contact.conversation("chat", DAY)
    contact.conversation("email", DAY, type="email")
    contact.conversation("voice", DAY, type="voice")
    assert set(contact.found()) == {"chat"}


def test_a_non_chat_conversation_is_out_even_under_the_id_of_a_chat_one(contact):
    contact.conversation("shared-id", DAY)
    contact.conversation("shared-id", 2 * DAY, type="email", tag="email-")
    assert contact.found() == {"shared-id": ["shared-id-0"]}


def test_another_users_contact_and_inbox_of_the_same_ids_are_out(contact):
    contact.conversation("mine", DAY)
    contact.conversation("current", DAY)
    contact.conversation("theirs", DAY, user="another-tenant")
    # Even the conversation id the agent is in: under another user it is another one.
    contact.conversation("current", 2 * DAY, user="another-tenant")
    assert contact.found() == {"current": ["current-0"], "mine": ["mine-0"]}
    assert contact.found(user="another-tenant") == {
        "theirs": ["theirs-0"],
        "current": ["current-0"],
    }
    assert contact.found(user="nobody") == {}


def test_disabled_searches_only_the_current_conversation(contact):
    contact.conversation("current", DAY)
    contact.conversation("recent", DAY)
    # The same conversation id in another inbox is not the current conversation.
    contact.conversation("current", DAY, inbox="inbox-2", tag="elsewhere-")
    assert contact.found(enabled=False) == {"current": ["current-0"]}
    assert set(contact.found(enabled=True)) == {"current", "recent"}


def test_without_a_current_conversation_only_recent_ones_are_searched(contact):
    contact.conversation("current", 200 * DAY)
    contact.conversation("recent", DAY)
    assert contact.found(current=None, enabled=True) == {"recent": ["recent-0"]}
    assert contact.found(current=None, enabled=False) == {}


def test_old_messages_of_an_in_scope_conversation_are_in(contact):
    contact.conversation("long-running", 300 * DAY, 120 * DAY, DAY)
    assert contact.found() == {
        "long-running": ["long-running-0", "long-running-1", "long-running-2"]
    }


def test_a_cursor_keeps_the_conversations_of_its_first_page(contact):
    contact.conversation("recent", 80 * DAY, 80 * DAY + 1)
    contact.conversation("current", DAY)
    clock = [NOW]
    searcher = CrossConversationSearcher(
        contact.es,
        alias=contact.alias,
        user_id=contact.user,
        contact_id=contact.id,
        inbox_id=contact.inbox,
        settings=CrossConversationSettings(enabled=True),
        cursor_key=KEY,
        page_size=1,
        now=lambda: clock[0],
    )
    first = searcher.search(WORD, current_session_id="current")
    clock[0] = Instant(NOW.nanos + 30 * DAY)  # "recent" has left the window by now
    second = searcher.search(WORD, current_session_id="current", cursor=first.next_cursor)
    assert [i.event_id for i in first.items + second.items] == ["recent-1", "recent-0"]
    fresh = searcher.search(WORD, current_session_id="current")
    assert [i.session_id for i in fresh.items] == ["current"]


def test_users_sharing_a_contact_inbox_conversation_and_event_ids_each_find_their_own(
    contact,
):
    # Contact, inbox, session and event ids repeat across users (tenants); one user's
    # search, on every page by cursor or by number (past the window too), holds only
    # that user's events.
    users = ("tenant-a", "tenant-b", "tenant-c")
    for user in users:
        contact.conversation("shared", DAY, 2 * DAY, 3 * DAY, user=user, text=f"{WORD} {user}")
    for user in users:
        searcher = CrossConversationSearcher(
            contact.es,
            alias=contact.alias,
            user_id=user,
            contact_id=contact.id,
            inbox_id=contact.inbox,
            settings=CrossConversationSettings(enabled=True),
            cursor_key=KEY,
            page_size=1,
            max_result_window=2,  # page numbers from 1 on hop past the window
            now=lambda: NOW,
        )
        expected = [(f"shared-{n}", f"{WORD} {user}") for n in (2, 1, 0)]
        page, served = searcher.search(WORD, current_session_id="shared"), []
        while True:
            served += [(item.event_id, item.text) for item in page.items]
            if page.next_cursor is None:
                break
            page = searcher.search(WORD, current_session_id="shared", cursor=page.next_cursor)
        assert served == expected
        by_number = [
            searcher.search(WORD, current_session_id="shared", page=n).items for n in range(4)
        ]
        assert [(i.event_id, i.text) for items in by_number for i in items] == expected
