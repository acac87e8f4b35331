"""Recall latency for one user with 100k events, on the node at ELASTICSEARCH_URL.

Loads a throwaway alias, times the engine, prints p50/p95, deletes the alias:

- page 0 of an `any` query;
- the page at depth 1,000 by cursor: the 1,000 pages before it are walked once, then
  the same page is fetched again and again with the same cursor;
- the same page by number (10,000 hits deep: one hop past the result window);
- cross-conversation page 0 (2,000 conversations of one contact, ~450 in the window),
  and the ways of finding its 200 most recently active conversations: the `terms`
  aggregation the engine uses, `collapse`, and a per-conversation summary index.

Each line gives wall-clock latency as the caller sees it and Elasticsearch's own
`took` (whole milliseconds, summed over the requests of one call).

    ELASTICSEARCH_URL=http://127.0.0.1:9200 python -m bench.recall_latency
"""

import argparse
import random
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from elasticsearch import Elasticsearch, helpers

from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.core.instant import Instant
from session_recall.core.partitions import partition_of
from session_recall.recall import (
    CrossConversationSearcher,
    CrossConversationSettings,
    CrossSessionSearcher,
)
from session_recall.recall.recent_conversations import recent_conversations_body, window_start
from session_recall.templates import install, uninstall

USER, CONTACT, INBOX = "bench-user", "bench-contact", "bench-inbox"
QUERY = "we decided"
NOW = Instant.parse("2026-07-01T00:00:00Z")
DAY = 86_400 * 10**9
CONVERSATIONS = 2_000
VOCABULARY = [f"w{n}" for n in range(500)]


class Took:
    """Passes calls to the client and adds up the `took` of every search."""

    def __init__(self, client: Elasticsearch) -> None:
        self.client, self.took = client, 0

    def search(self, **kwargs: Any) -> Any:
        if kwargs.get("filter_path"):
            kwargs["filter_path"] += ",took"
        response = self.client.search(**kwargs)
        self.took += int(response.body.get("took", 0))
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


def events(total: int, others: int) -> Iterator[dict[str, Any]]:
    """`total` events of USER over 2,000 conversations spread over 400 days; 30% say
    QUERY. Then `others` events of twenty other users."""
    rng = random.Random(7)
    per = total // CONVERSATIONS
    for n in range(total):
        conversation, k = divmod(n, per)
        started = NOW.nanos - 400 * DAY + conversation * (400 * DAY // CONVERSATIONS)
        words = rng.sample(VOCABULARY, rng.randint(6, 18))
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), QUERY)
        yield {
            "event_id": f"e{n:07d}",
            "user_id": USER,
            "session_id": f"conv-{conversation:05d}",
            "contact_id": CONTACT,
            "inbox_id": INBOX,
            "conversation_type": "email" if conversation % 10 == 0 else "chat",
            "type": "user_message" if k % 2 == 0 else "assistant_message",
            "text": " ".join(words),
            "timestamp": Instant(started + k * 60 * 10**9).to_elasticsearch(),
        }
    for n in range(others):
        yield {
            "event_id": f"o{n:07d}",
            "user_id": f"other-{n % 20}",
            "session_id": f"other-{n % 200}",
            "text": " ".join(rng.sample(VOCABULARY, 10)) + f" {QUERY}",
            "timestamp": Instant(NOW.nanos - rng.randrange(400 * DAY)).to_elasticsearch(),
        }


def load(es: Elasticsearch, alias: str, total: int, others: int) -> float:
    started = time.perf_counter()
    actions = (
        {
            "_index": partition_of(alias, Instant.parse(d["timestamp"]), "month").index,
            "_id": d["event_id"],
            "_routing": d["user_id"],
            "_source": d,
        }
        for d in events(total, others)
    )
    for ok, item in helpers.streaming_bulk(
        es, actions, chunk_size=2000, max_chunk_bytes=10_000_000, raise_on_error=False
    ):
        if not ok:
            raise RuntimeError(f"bulk failure: {item}")
    es.indices.refresh(index=alias)
    return time.perf_counter() - started


def timed(took: Took, call: Callable[[], object], runs: int, warmup: int = 5) -> str:
    for _ in range(warmup):
        call()
    wall: list[float] = []
    server: list[float] = []
    for _ in range(runs):
        took.took = 0
        started = time.perf_counter()
        call()
        wall.append((time.perf_counter() - started) * 1000)
        server.append(took.took)
    return (
        f"p50 {statistics.median(wall):7.2f} ms  p95 {_p95(wall):7.2f} ms"
        f"   took p50 {statistics.median(server):5.1f} ms  p95 {_p95(server):5.1f} ms"
    )


def row(label: str, figures: str) -> None:
    print(f"{label:<42}{figures}", flush=True)


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def summary_index(es: Elasticsearch, alias: str) -> str:
    """One document per conversation, as an indexer could keep it: the alternative to
    the aggregation, built here from the events to time its query."""
    name = f"{alias}-summary"
    es.indices.create(
        index=name,
        settings={"number_of_shards": 1, "number_of_replicas": 0},
        mappings={
            "properties": {
                f: {"type": "keyword"}
                for f in ("contact_id", "inbox_id", "conversation_type", "session_id")
            }
            | {"last_message": {"type": "date_nanos"}}
        },
    )
    body = recent_conversations_body(
        user_id=USER,
        contact_id=CONTACT,
        inbox_id=INBOX,
        start=Instant(0),
        end=NOW,
        limit=CONVERSATIONS,
    )
    # Every conversation of the contact, whatever its type or age: user, contact, inbox.
    body["query"]["bool"]["filter"] = body["query"]["bool"]["filter"][:3]
    body["aggs"]["conversations"]["aggs"]["type"] = {"terms": {"field": "conversation_type"}}
    buckets = es.search(index=alias, body=body).body["aggregations"]["conversations"]["buckets"]
    docs = (
        {
            "_index": name,
            "_id": b["key"],
            "_source": {
                "contact_id": CONTACT,
                "inbox_id": INBOX,
                "session_id": b["key"],
                "conversation_type": b["type"]["buckets"][0]["key"],
                "last_message": b["last_message"]["value_as_string"],
            },
        }
        for b in buckets
    )
    helpers.bulk(es, docs)
    es.indices.refresh(index=name)
    return name


def cross_session(took: Took, alias: str, key: bytes, runs: int, depth: int) -> None:
    searcher = CrossSessionSearcher(took, alias=alias, user_id=USER, cursor_key=key)  # type: ignore[arg-type]
    row("page 0", timed(took, lambda: searcher.search(QUERY), runs))
    page, started = searcher.search(QUERY), time.perf_counter()
    for _ in range(depth - 1):
        page = searcher.search(QUERY, cursor=page.next_cursor)
    print(f"(walked {depth:,} pages by cursor in {time.perf_counter() - started:.1f} s)")
    cursor = page.next_cursor
    row(
        f"page {depth:,} by cursor",
        timed(took, lambda: searcher.search(QUERY, cursor=cursor), runs),
    )
    assert searcher.search(QUERY, page=depth).items == searcher.search(QUERY, cursor=cursor).items
    row(f"page {depth:,} by number", timed(took, lambda: searcher.search(QUERY, page=depth), runs))


def cross_conversation(took: Took, alias: str, key: bytes, runs: int) -> None:
    searcher = CrossConversationSearcher(
        took,  # type: ignore[arg-type]
        alias=alias,
        user_id=USER,
        contact_id=CONTACT,
        inbox_id=INBOX,
        settings=CrossConversationSettings(enabled=True),
        cursor_key=key,
        now=lambda: NOW,
    )

    def call() -> Any:
        return searcher.search(QUERY, current_session_id="conv-00000")

    assert call().items, "cross-conversation search found nothing"
    row("C page 0", timed(took, call, runs))


def top_conversations(es: Elasticsearch, took: Took, alias: str, runs: int) -> None:
    start = window_start(NOW, 90)
    agg = recent_conversations_body(
        user_id=USER, contact_id=CONTACT, inbox_id=INBOX, start=start, end=NOW, limit=200
    )
    count = {**agg, "aggs": {"n": {"cardinality": {"field": "session_id"}}}}
    in_window = es.search(index=alias, routing=USER, body=count).body["aggregations"]["n"]
    print(f"(C: {in_window['value']} chat conversations in the 90-day window, 200 kept)")
    collapse = {
        "query": agg["query"],
        "sort": [{"timestamp": "desc"}],
        "collapse": {"field": "session_id"},
        "_source": False,
        "size": 200,
        "track_total_hits": False,
    }
    summary = summary_index(es, alias)
    recent = [
        {"term": {"contact_id": CONTACT}},
        {"term": {"inbox_id": INBOX}},
        {"term": {"conversation_type": "chat"}},
        {"range": {"last_message": {"gte": start.to_elasticsearch()}}},
    ]
    summary_body = {
        "query": {"bool": {"filter": recent}},
        "sort": [{"last_message": "desc"}],
        "_source": ["session_id"],
        "size": 200,
        "track_total_hits": False,
    }
    for label, index, routing, body in (
        ("terms agg by max(timestamp)", alias, USER, agg),
        ("collapse on session_id", alias, USER, collapse),
        ("summary index", summary, None, summary_body),
    ):

        def call(i: str = index, r: str | None = routing, b: dict[str, Any] = body) -> Any:
            return took.search(index=i, routing=r, body=b)

        row(f"C top 200: {label}", timed(took, call, runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--others", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--depth", type=int, default=1_000)
    args = parser.parse_args(argv)

    es = make_client(Settings())
    alias = f"bench-recall-r{uuid.uuid4().hex[:8]}"  # no dash before a digit
    install(es, alias)
    try:
        seconds = load(es, alias, args.events, args.others)
        print(f"loaded {args.events:,} + {args.others:,} events into {alias} in {seconds:.1f} s")
        took, key = Took(es), b"bench-cursor-key-0123456789abcdef"
        cross_session(took, alias, key, args.runs, args.depth)
        cross_conversation(took, alias, key, args.runs)
        top_conversations(es, took, alias, args.runs)
    finally:
        uninstall(es, alias)
        es.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
