"""The basic reads, against the real node: a user's sessions (`sessions`, GET
/v1/users/{user}/sessions), a session's events in order (`show`, GET .../events), and
a delete that can be tried first (`delete --dry-run`)."""

import json
import random
from typing import Any

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.http import create_app
from session_recall.recall import SessionLister
from session_recall.recall.conversation import ConversationSearcher
from tests.support.events import Event, event, write_events
from tests.support.ndjson import stored

pytestmark = pytest.mark.integration

KEY = b"basic-reads-test-cursor-key-32b!"
USERS = ("alice", "bob")
# Session ids repeat across users on purpose: only the user tells them apart.
SESSIONS = ("s-a", "s-b", "s-c", "s-d", "s-e", "s-f", "s-g")


def build() -> list[Event]:
    rng = random.Random(16)
    events = []
    for user in USERS:
        for session in rng.sample(SESSIONS, 5 if user == "alice" else 3):
            start = Instant.parse("2026-07-01T00:00:00Z").nanos + rng.randrange(10**15)
            for n in range(rng.randint(1, 6)):
                events.append(
                    event(
                        f"{session}-{n}",
                        user_id=user,
                        session_id=session,
                        # Nanoseconds apart: the listing must keep them.
                        timestamp=Instant(start + n * 1_000_000_001 + rng.randrange(999)),
                        text=f"message {n} of {session}",
                    )
                )
    return events


EVENTS = build()


def expected_sessions(user: str) -> list[tuple[str, int, int, int]]:
    """(session, first nanos, last nanos, events) of the user, in session id order."""
    by_session: dict[str, list[int]] = {}
    for e in EVENTS:
        if e["user_id"] == user:
            by_session.setdefault(e["session_id"], []).append(Instant.parse(e["timestamp"]).nanos)
    return [(s, min(t), max(t), len(t)) for s, t in sorted(by_session.items())]


def expected_events(user: str, session: str) -> list[str]:
    mine = [e for e in EVENTS if (e["user_id"], e["session_id"]) == (user, session)]
    return [e["event_id"] for e in sorted(mine, key=lambda e: Instant.parse(e["timestamp"]))]


@pytest.fixture(scope="module")
def dataset(es: Elasticsearch, module_alias: str) -> str:
    write_events(es, module_alias, EVENTS)
    return module_alias


def _cli(es_url: str, alias: str, *args: str) -> Any:
    return CliRunner().invoke(main, ["--es-url", es_url, "--index", alias, *args])


@settings(max_examples=20, deadline=None)
@given(user=st.sampled_from([*USERS, "carol"]), page_size=st.integers(min_value=1, max_value=6))
def test_paging_through_a_users_sessions_serves_each_once_and_no_one_elses(
    es, dataset, user, page_size
):
    lister = SessionLister(es, alias=dataset, user_id=user, page_size=page_size)
    served, page, pages = [], lister.list(), 1
    while True:
        assert len(page.items) <= page_size
        served += [(s.session_id, s.first.nanos, s.last.nanos, s.events) for s in page.items]
        if page.next_cursor is None:
            break
        assert len(page.items) == page_size, "a short page is the last one"
        page, pages = lister.list(cursor=page.next_cursor), pages + 1
    assert served == expected_sessions(user)
    # A page per page_size sessions, and no empty page at the end.
    assert pages == max(1, -(-len(served) // page_size))


@settings(max_examples=20, deadline=None)
@given(
    user=st.sampled_from(USERS),
    session=st.sampled_from(SESSIONS),
    page_size=st.integers(min_value=1, max_value=4),
)
def test_reading_a_session_pages_its_events_in_order_by_cursor_and_by_number(
    es, dataset, user, session, page_size
):
    reader = ConversationSearcher(
        es, alias=dataset, user_id=user, session_id=session, cursor_key=KEY, page_size=page_size
    )
    page, by_cursor = reader.read(), []
    while True:
        by_cursor += [item.event_id for item in page.items]
        assert {item.session_id for item in page.items} <= {session}
        if page.next_cursor is None:
            break
        page = reader.read(cursor=page.next_cursor)
    expected = expected_events(user, session)
    assert by_cursor == expected
    by_number = [i.event_id for n in range(len(expected) + 1) for i in reader.read(page=n).items]
    assert by_number == expected


def test_sessions_prints_a_line_per_session_and_the_next_page(es_url: str, dataset: str):
    first, *rest = expected_sessions("alice")
    result = _cli(es_url, dataset, "sessions", "--user", "alice", "--page-size", "1")
    assert result.exit_code == 0, result.output
    session, start, end, count = first
    assert result.stdout.splitlines() == [
        "session\tfirst\tlast\tevents",
        f"{session}\t{Instant(start).isoformat()}\t{Instant(end).isoformat()}\t{count}",
    ]
    assert result.stderr == f"More: session-recall sessions --user alice --cursor {session}\n"

    after = _cli(es_url, dataset, "sessions", "--user", "alice", "--cursor", session)
    page = json.loads(
        _cli(
            es_url, dataset, "sessions", "--user", "alice", "--cursor", session, "--format", "json"
        ).stdout
    )
    assert [line.split("\t")[0] for line in after.stdout.splitlines()[1:]] == [s for s, *_ in rest]
    assert [item["session_id"] for item in page["items"]] == [s for s, *_ in rest]
    assert page["next_cursor"] is None


def test_sessions_of_a_user_without_any_says_so(es_url: str, dataset: str):
    result = _cli(es_url, dataset, "sessions", "--user", "ALICE")
    assert (result.exit_code, result.output) == (0, "No sessions of user 'ALICE'.\n")


def test_show_prints_a_sessions_events_oldest_first(es_url: str, dataset: str):
    session = expected_sessions("bob")[0][0]
    result = _cli(
        es_url, dataset, "show", "--user", "bob", "--session", session, "--format", "json"
    )
    assert result.exit_code == 0, result.output
    page = json.loads(result.output)
    assert [item["event_id"] for item in page["items"]] == expected_events("bob", session)
    assert page["next_cursor"] is None


def test_the_reads_over_http(es: Elasticsearch, es_url: str, dataset: str, tmp_path):
    settings = Settings(
        ELASTICSEARCH_URL=es_url, SESSION_RECALL_INDEX=dataset, SESSION_RECALL_HOME=tmp_path
    )
    with TestClient(create_app(settings)) as web:
        first = web.get("/v1/users/alice/sessions", params={"page_size": 2})
        assert first.status_code == 200, first.text
        more = first.json()["next_cursor"]  # the same name as an event page's
        rest = web.get("/v1/users/alice/sessions", params={"cursor": more})
        listed = [s["session_id"] for s in first.json()["items"] + rest.json()["items"]]
        assert listed == [s for s, *_ in expected_sessions("alice")]

        session = listed[0]
        path = f"/v1/users/alice/sessions/{session}/events"
        served, cursor = [], None
        for _ in range(len(expected_events("alice", session))):
            params = {"page_size": 1} | ({"cursor": cursor} if cursor else {})
            page = web.get(path, params=params)
            assert page.status_code == 200, page.text
            served += [item["event_id"] for item in page.json()["items"]]
            cursor = page.json()["next_cursor"]
        assert cursor is None
        assert served == expected_events("alice", session)

        refused = web.get("/v1/users/alice/sessions", params={"page_size": 0})
        assert refused.status_code == 422 and "page size" in refused.json()["hint"]
        paths = web.get("/openapi.json").json()["paths"]
        assert {"/v1/users/{user}/sessions", "/v1/users/{user}/sessions/{session}/events"} <= set(
            paths
        )


def test_a_dry_run_counts_what_delete_would_remove_and_changes_nothing(
    es: Elasticsearch, es_url: str, alias: str
):
    write_events(es, alias, EVENTS)
    session, *_, count = expected_sessions("alice")[0]

    dry = _cli(es_url, alias, "delete", "--user", "alice", "--session", session, "--dry-run")
    typo = _cli(es_url, alias, "delete", "--user", "ALICE", "--dry-run")

    assert (dry.exit_code, dry.output) == (
        0,
        f"Would remove {count} events of session {session!r} of user 'alice'; "
        "nothing was changed (dry run).\n",
    )
    assert typo.output.startswith("Would remove 0 events of user 'ALICE'")
    assert stored(es, alias, user_id="alice", session_id=session) == count
    es.indices.refresh(index=f"{alias}-tombstones")  # made by setup
    assert es.count(index=f"{alias}-tombstones")["count"] == 0, "no tombstone was written"
    done = _cli(es_url, alias, "delete", "--user", "alice", "--session", session)
    assert done.output == f"Removed {count} events of session {session!r} of user 'alice'.\n"
