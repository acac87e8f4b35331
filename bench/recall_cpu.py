"""CPU per recall call: this process's (the library's) and the node's, on a kept alias.

    python -m bench.recall_cpu --index ALIAS --user U "budget, deadline, we decided, 预算"

Runs `cross_session_search` page 0 `--calls` times (after 20 untimed calls) and prints
the CPU time per call of this process (user + system) and of the Elasticsearch node
(its `process.cpu` stats, refreshed once a second; other clients of the node count
too, so run it on a quiet node). Then it sends the page's own search, as the engine
sent it, once to the alias and once to the partition that holds its hits, and prints
the node's CPU per search for each: what the pre-filter's fan-out over every partition
of the alias costs (`_shards.skipped` of the alias search).
"""

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from elasticsearch import Elasticsearch

from bench.machine import node_cpu_s, own_cpu_s
from bench.took import TookRecorder
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.tools import cross_session_tool
from session_recall.tools.searchers import searchers_for

WARMUP = 20


def _per_call(client: Elasticsearch, calls: int, call: Callable[[], Any]) -> tuple[float, float]:
    """(this process's, the node's) CPU milliseconds per call of `call`."""
    for _ in range(WARMUP):
        call()
    node, own = node_cpu_s(client), own_cpu_s()
    for _ in range(calls):
        call()
    own = own_cpu_s() - own
    node = node_cpu_s(client) - node
    return own / calls * 1000, node / calls * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("query")
    parser.add_argument("--index", required=True, help="a kept alias, loaded beforehand")
    parser.add_argument("--user", required=True)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--es-url", default=os.environ.get("ELASTICSEARCH_URL"))
    args = parser.parse_args(argv)
    client = make_client(Settings(ELASTICSEARCH_URL=args.es_url))
    recorder = TookRecorder(client)
    searchers = searchers_for(recorder, Settings(SESSION_RECALL_INDEX=args.index))  # type: ignore[arg-type]
    tool = cross_session_tool(searchers.cross_session(user_id=args.user))
    arguments = {"innerThought": "bench", "query": args.query}

    own, node = _per_call(client, args.calls, lambda: tool.render(tool.run(arguments)))
    print(f"cross_session_search page 0: {own:.2f} ms CPU per call here, {node:.2f} in the node")

    recorder.take()
    tool.run(arguments)
    sent = recorder.last_requests[0]
    searches = sent["searches"]
    body = searches[1]  # the page's (after its header); the look for the latest follows
    params = {"routing": sent.get("routing"), "pre_filter_shard_size": 1}
    answer = client.search(index=args.index, body=body, **params).body
    shards = answer["_shards"]
    print(f"its page search over the alias: {shards['total']} shards, {shards['skipped']} skipped")
    first = answer["hits"]["hits"][0]["_index"] if answer["hits"]["hits"] else None
    if first is None:
        print("no hit: nothing to compare")
        return 0
    for target in (args.index, first):
        _, node = _per_call(
            client, args.calls, lambda t=target: client.search(index=t, body=body, **params)
        )
        print(f"  sent to {target}: {node:.2f} ms of node CPU per search")
    return 0


if __name__ == "__main__":
    sys.exit(main())
