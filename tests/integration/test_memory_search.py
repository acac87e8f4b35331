"""memory_search end to end: neighbours, filters, modes, and the fallback to keywords
when the query cannot be embedded."""

import json
from collections.abc import Sequence

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.embeddings import EmbedderUnavailable, StaticEmbedder
from session_recall.indexer import Event, Submission, Writer
from session_recall.recall import MemorySearcher, Searchers
from tests.support.memory_eval import events

pytestmark = pytest.mark.integration

KEY = b"memory-search-cursor-key-32byte!"
QUESTION = "What did the animal doctor recommend for my pet's stomach?"


class DownEmbedder:
    """The seam for an embedder outage at search time: it always fails."""

    model_id = StaticEmbedder().model_id
    dims = StaticEmbedder().dims

    def embed(self, texts: Sequence[str]) -> list:
        raise EmbedderUnavailable("The embeddings endpoint did not answer after 3 attempts.")


@pytest.fixture(scope="module")
def alias(es: Elasticsearch, module_alias: str) -> str:
    written = Writer(es, module_alias, embedder=StaticEmbedder()).write(
        Submission(Event.model_validate(event)) for event in events()
    )
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=module_alias)
    return module_alias


def bob(es: Elasticsearch, alias: str, embedder=None) -> MemorySearcher:
    return Searchers(es, alias, KEY, embedder=embedder).memory(user_id="bob")


def test_each_hit_comes_with_the_turns_of_its_session_around_it(es: Elasticsearch, alias: str):
    result = bob(es, alias, StaticEmbedder()).search(QUESTION, context=2, limit=1)
    [hit] = result.hits
    # The vet's turns (2 or 3, as the model ranks them) sit mid-session: two turns each side.
    assert hit.event.event_id in ("bob-dog-2", "bob-dog-3")
    turn = int(hit.event.event_id.removeprefix("bob-dog-"))
    assert [e.event_id for e in hit.before] == [f"bob-dog-{turn - 2}", f"bob-dog-{turn - 1}"]
    assert [e.event_id for e in hit.after] == [f"bob-dog-{turn + 1}", f"bob-dog-{turn + 2}"]
    assert {e.session_id for e in [*hit.before, *hit.after]} == {"bob-dog"}


def test_a_hit_at_the_start_of_its_session_has_no_turn_before(es: Elasticsearch, alias: str):
    [hit] = bob(es, alias).search("Biscuit vomiting", mode="keyword", limit=1, context=3).hits
    assert hit.event.event_id == "bob-dog-0"
    assert hit.before == [] and [e.event_id for e in hit.after] == [
        "bob-dog-1",
        "bob-dog-2",
        "bob-dog-3",
    ]


def _store(es: Elasticsearch, alias: str, user: str, turns: list[tuple[str, str, str]]) -> None:
    """Store one user's turns, (session, timestamp, text) each, with ids `<user>-<n>`."""
    events = [
        {"user_id": user, "session_id": session, "event_id": f"{user}-{i}", "timestamp": stamp,
         "type": "user_message", "text": text}
        for i, (session, stamp, text) in enumerate(turns)
    ]  # fmt: skip
    written = Writer(es, alias).write(Submission(Event.model_validate(e)) for e in events)
    assert all(w.result.stored for w in written)
    es.indices.refresh(index=alias)


def test_turns_days_apart_are_still_the_neighbours_of_a_hit(es: Elasticsearch, alias: str):
    """Neighbours are looked for in the hit's partition first, then across the alias
    when fewer were found: a session's turns months apart still come back, in order."""
    turns = [
        ("2025-11-30T10:00:00Z", "we met a quokka keeper at the zoo"),
        ("2026-02-03T10:00:00Z", "the wombat question again"),
        ("2026-02-03T10:05:00Z", "a wombat digs burrows"),
        ("2026-05-20T10:00:00Z", "the keeper wrote back"),
    ]
    _store(es, alias, "c", [("c-far", stamp, text) for stamp, text in turns])
    searcher = Searchers(es, alias, KEY).memory(user_id="c")

    [hit] = searcher.search("wombat question", mode="keyword", limit=1, context=2).hits

    assert hit.event.event_id == "c-1"
    assert [e.event_id for e in hit.before] == ["c-0"]  # the only one, 65 days earlier
    assert [e.event_id for e in hit.after] == ["c-2", "c-3"]  # 5 minutes, then 106 days
    [hit] = searcher.search("burrows", mode="keyword", limit=1, context=1).hits
    assert ([e.event_id for e in hit.before], [e.event_id for e in hit.after]) == (["c-1"], ["c-3"])


class MsearchTargets:
    """A seam around the client: it notes where each search of an `msearch` goes (its
    header's index, or None for the alias) and passes the request on unchanged."""

    def __init__(self, es: Elasticsearch) -> None:
        self._es = es
        self.targets: list[list[str | None]] = []

    def msearch(self, **request):
        self.targets.append([header.get("index") for header in request["searches"][::2]])
        return self._es.msearch(**request)

    def __getattr__(self, name: str):
        return getattr(self._es, name)


def test_neighbours_are_looked_for_in_the_hits_partition_first(es: Elasticsearch, alias: str):
    """Two turns around a hit in its own month come from that partition alone, in one
    round trip; a turn in another month is looked for across the alias."""
    turns = [
        ("2026-02-03T10:00:00Z", "the heron came back"),
        ("2026-02-03T10:01:00Z", "a heron fishing by the pond at dawn"),
        ("2026-02-03T10:02:00Z", "it caught a carp"),
        ("2026-04-01T09:00:00Z", "no sign of the egret since"),
    ]
    _store(es, alias, "e", [("e-pond", stamp, text) for stamp, text in turns])
    client = MsearchTargets(es)
    searcher = Searchers(client, alias, KEY).memory(user_id="e")  # type: ignore[arg-type]

    [hit] = searcher.search("heron fishing pond", mode="keyword", limit=1, context=1).hits

    assert hit.event.event_id == "e-1"
    assert ([e.event_id for e in hit.before], [e.event_id for e in hit.after]) == (
        ["e-0"],
        ["e-2"],
    )
    ranked, around = client.targets
    assert ranked == [None]  # the ranked list: every partition
    assert around == [f"{alias}-2026.02"] * 2  # before and after: the hit's month alone

    client.targets.clear()
    [hit] = searcher.search("carp", mode="keyword", limit=1, context=1).hits

    assert ([e.event_id for e in hit.before], [e.event_id for e in hit.after]) == (
        ["e-1"],
        ["e-3"],
    )
    assert client.targets[1:] == [[f"{alias}-2026.02"] * 2, [None]]  # after: April's


def test_hits_at_the_first_and_the_last_instant_have_their_neighbours(
    es: Elasticsearch, alias: str
):
    """The neighbour looks hold at the ends of the instants an event can carry."""
    stamps = [
        "1970-01-01T00:00:00Z",
        "1970-01-01T00:00:01Z",
        "2262-04-11T23:47:16.854775806Z",
        "2262-04-11T23:47:16.854775807Z",
    ]
    texts = ["the first aardvark", "after it", "before the end", "the last aardvark"]
    turns = enumerate(zip(stamps, texts, strict=True))
    _store(es, alias, "d", [(f"d-{i // 2}", stamp, text) for i, (stamp, text) in turns])

    hits = Searchers(es, alias, KEY).memory(user_id="d").search("aardvark", mode="keyword").hits

    around = {h.event.event_id: ([e.event_id for e in h.before], [e.event_id for e in h.after])
              for h in hits}  # fmt: skip
    assert around == {"d-0": ([], ["d-1"]), "d-3": (["d-2"], [])}


def test_since_until_and_types_keep_only_the_events_asked_for(es: Elasticsearch, alias: str):
    result = bob(es, alias, StaticEmbedder()).search(
        "euros",
        since="2026-03-20T00:00:00Z",
        until="2026-04-10T00:00:00Z",
        types=["user_message"],
        limit=50,
    )
    assert result.hits
    for hit in result.hits:
        assert hit.event.type == "user_message"
        assert "2026-03-20" <= hit.event.timestamp.isoformat() <= "2026-04-10"


def test_an_embedder_that_fails_leaves_a_keyword_search_that_says_so(es: Elasticsearch, alias: str):
    result = bob(es, alias, DownEmbedder()).search("oak cabinets")
    assert (result.requested_mode, result.mode) == ("hybrid", "keyword")
    assert "keywords only" in (result.notice or "") and "did not answer" in (result.notice or "")
    assert result.hits[0].event.event_id == "bob-kitchen-3"
    assert result.hits[0].score.vector_rank is None


def test_without_an_embedder_the_search_runs_on_keywords(es: Elasticsearch, alias: str):
    searcher = bob(es, alias)
    assert searcher.search("oak cabinets").mode == "keyword"
    asked = searcher.search("oak cabinets", mode="semantic")
    assert asked.mode == "keyword" and "No embedder is configured" in (asked.notice or "")


def test_the_cli_json_lists_hits_in_rank_order_and_says_when_it_fell_back(es_url: str, alias: str):
    env = {  # an endpoint nothing listens on: the embedder is down at search time
        "SESSION_RECALL_EMBEDDER": "endpoint",
        "SESSION_RECALL_EMBEDDINGS_URL": "http://127.0.0.1:9/v1",
        "SESSION_RECALL_EMBEDDINGS_MODEL": "m",
        "SESSION_RECALL_EMBEDDINGS_DIMS": "256",
    }
    command = ["memory-search", "--user", "bob", "--format", "json", "--type", "user_message"]
    result = CliRunner().invoke(
        main, ["--es-url", es_url, "--index", alias, *command, "oak cabinets quartz"], env=env
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["mode"] == "keyword" and document["requestedMode"] == "hybrid"
    assert "keywords only" in document["notice"]
    first = document["hits"][0]
    assert first["text"] == "We chose oak cabinets and a white quartz countertop."
    assert set(first) == {"sessionId", "timestamp", "type", "text", "before", "after", "score"}
    fused = [hit["score"]["fused"] for hit in document["hits"]]
    assert fused == sorted(fused, reverse=True)
