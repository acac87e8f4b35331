"""The baseline a user would write instead of `session-recall ingest`: `json.loads` per
line, then `helpers.streaming_bulk` with `create`, the id and the routing; no
validation, no dead letters, no checkpoint, no tombstones.

    python -m bench.loader --es-url URL --index ALIAS [--partition month|year] FILE

Each event goes to its month's partition, as ours does (`ALIAS-2026.07`, from the
template), or to its year's (`ALIAS-2026`) with `--partition year`. Java producers'
camelCase keys are renamed to the mapping's snake_case (the mapping is strict). The id
is the same digest as ours (sha256 of `[user_id, event_id]` as compact JSON), so both
store the same documents under the same ids.
"""

import argparse
import hashlib
import json
import sys

from elasticsearch import Elasticsearch, helpers

SNAKE = {"eventId": "event_id", "userId": "user_id", "sessionId": "session_id",
         "contactId": "contact_id", "inboxId": "inbox_id",
         "conversationType": "conversation_type"}  # fmt: skip


# The partition's name from the timestamp's first characters: its month's or its year's.
SUFFIX_CHARS = {"month": 7, "year": 4}


def actions(path: str, index: str, suffix_chars: int = 7):  # type: ignore[no-untyped-def]
    with open(path, "rb") as lines:
        for line in lines:
            event = {SNAKE.get(key, key): value for key, value in json.loads(line).items()}
            key = json.dumps([event["user_id"], event["event_id"]], ensure_ascii=False,
                             separators=(",", ":"))  # fmt: skip
            yield {
                "_op_type": "create",
                "_index": f"{index}-{event['timestamp'][:suffix_chars].replace('-', '.')}",
                "_id": hashlib.sha256(key.encode()).hexdigest(),
                "routing": event["user_id"],
                "_source": event,
            }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--es-url", required=True)
    parser.add_argument("--index", required=True)
    parser.add_argument("--partition", choices=sorted(SUFFIX_CHARS), default="month")
    parser.add_argument("path")
    args = parser.parse_args()
    client = Elasticsearch(args.es_url, request_timeout=120)
    stored = failed = 0
    for ok, _item in helpers.streaming_bulk(
        client,
        actions(args.path, args.index, SUFFIX_CHARS[args.partition]),
        chunk_size=1000,
        raise_on_error=False,
    ):
        stored += ok
        failed += not ok
    print(f"stored {stored}, failed {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
