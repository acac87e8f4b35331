"""Context vectors for the LoCoMo harness: each turn embedded with the turns before it.

The enrichment pass stores a vector of each event's own text. This experiment stores,
beside it, a vector of the event's text with the `reach` turns before it in its session
(the keyword list's `context` rule, on the vector side), under a model id of its own,
`<model>+ctx<reach>`: the bench's `Experiment.context_model` then searches it. Written
by the harness after the pass, with bulk updates routed like the events.
"""

import time
from typing import Any

from elasticsearch import Elasticsearch, helpers

from session_recall.core.order import event_order
from session_recall.embeddings import VECTORS_FIELD, Embedder, vector_key

# A conversation of LoCoMo's holds fewer turns than this.
_MAX_TURNS = 10_000


def context_model(embedder: Embedder, reach: int) -> str:
    return f"{embedder.model_id}+ctx{reach}"


def store(
    client: Elasticsearch, alias: str, embedder: Embedder, users: list[str], *, reach: int
) -> tuple[str, float]:
    """Each turn's context vector for `users`' events in `alias`; the context model's
    id and the rate the texts were embedded at (turns/s)."""
    model = context_model(embedder, reach)
    field = vector_key(model)
    seconds, turns = 0.0, 0
    for user in users:
        hits = _turns(client, alias, user)
        windows = [_window(hits, i, reach) for i in range(len(hits))]
        started = time.perf_counter()
        vectors = embedder.embed(windows)
        seconds += time.perf_counter() - started
        turns += len(hits)
        actions: list[dict[str, Any]] = [
            {
                "_op_type": "update",
                "_index": hit["_index"],
                "_id": hit["_id"],
                "routing": user,
                "doc": {VECTORS_FIELD: {field: [float(x) for x in vector]}},
            }
            for hit, vector in zip(hits, vectors, strict=True)
            if vector is not None
        ]
        helpers.bulk(client, actions, chunk_size=200, refresh=False)
    client.indices.refresh(index=alias)
    return model, turns / seconds if seconds else 0.0


def _turns(client: Elasticsearch, alias: str, user: str) -> list[dict[str, Any]]:
    answer = client.search(
        index=alias,
        routing=user,
        query={"term": {"user_id": user}},
        sort=event_order(),
        size=_MAX_TURNS,
        source=["text", "session_id"],
    )
    hits: list[dict[str, Any]] = answer["hits"]["hits"]
    return hits


def _window(hits: list[dict[str, Any]], i: int, reach: int) -> str:
    """Turn `i`'s text, then the `reach` turns before it in its session, nearest first:
    the encoder keeps a text's first tokens, so the turn's own are never cut."""
    session = hits[i]["_source"]["session_id"]
    start = i
    while start > 0 and i - start < reach and hits[start - 1]["_source"]["session_id"] == session:
        start -= 1
    return "\n".join(str(hit["_source"].get("text", "")) for hit in hits[start : i + 1][::-1])


def store_sessions(client: Elasticsearch, alias: str, embedder: Embedder, users: list[str]) -> str:
    """Each session's vector, the mean of its turns' stored vectors (no model runs), on
    every turn of the session under `<model>+session`; that model id."""
    model = f"{embedder.model_id}+session"
    own, field = vector_key(embedder.model_id), vector_key(model)
    for user in users:
        answer = client.search(
            index=alias,
            routing=user,
            query={"term": {"user_id": user}},
            size=_MAX_TURNS,
            source={"includes": ["session_id", f"{VECTORS_FIELD}.{own}"], "exclude_vectors": False},
        )
        hits = answer["hits"]["hits"]
        sums: dict[str, list[float]] = {}
        for hit in hits:
            vector = (hit["_source"].get(VECTORS_FIELD) or {}).get(own)
            if vector is None:
                continue
            total = sums.setdefault(hit["_source"]["session_id"], [0.0] * len(vector))
            for i, x in enumerate(vector):
                total[i] += x
        means = {s: _unit(v) for s, v in sums.items()}
        actions = [
            {"_op_type": "update", "_index": hit["_index"], "_id": hit["_id"], "routing": user,
             "doc": {VECTORS_FIELD: {field: means[hit["_source"]["session_id"]]}}}
            for hit in hits
            if hit["_source"]["session_id"] in means
        ]  # fmt: skip
        helpers.bulk(client, actions, chunk_size=200, refresh=False)
    client.indices.refresh(index=alias)
    return model


def _unit(vector: list[float]) -> list[float]:
    norm = sum(x * x for x in vector) ** 0.5 or 1.0
    return [x / norm for x in vector]
