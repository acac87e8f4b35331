"""The one table from an error's kind to what each adapter answers: the CLI's exit
code, the HTTP status (with Retry-After when a retry will do), and the tool's text.

Adapters look an error up here by its `kind`, never by its class, so the same failure
means the same thing on every surface:

| kind        | exit | HTTP                    | meaning                                 |
| ----------- | ---- | ----------------------- | --------------------------------------- |
| caller      | 2    | 422                     | change the request                      |
| operator    | 3    | 500                     | fix the deployment, then run it again   |
| unavailable | 3    | 503 with Retry-After    | Elasticsearch is away or not set up yet |
| unavailable, shards missing | 1 | 503 with Retry-After | a search would lack hits: retry |

A search that cannot reach every shard (`ShardsUnavailable`, a node of the cluster
away) is unavailable like any other, with one difference on the CLI: it exits 1, as
a command that failed and is worth running again soon, where 3 asks for a node to be
started or `setup` to be run. Exit 1 is also `ingest`'s, for "some lines went to the
dead-letter file" (an ingest never searches); exit 2 is also click's own for usage
errors. HTTP requests the adapter itself cannot read (a
body that is not JSON, an unknown query parameter) are answered 400 before any of
this applies.
"""

from dataclasses import dataclass, replace

from session_recall.core.errors import ErrorKind, SessionRecallError, ShardsUnavailable

# Long enough for a node to come back or `setup` to run, short enough that a producer
# with a queue behind it does not wait much past that.
RETRY_AFTER_S = 5

EXIT_OK = 0
EXIT_DEAD_LETTERED = 1
EXIT_SEARCH_INCOMPLETE = 1
EXIT_USAGE = 2
EXIT_NOT_READY = 3


@dataclass(frozen=True)
class Answer:
    exit_code: int
    http_status: int
    retry_after_s: int | None = None


POLICY: dict[ErrorKind, Answer] = {
    ErrorKind.CALLER: Answer(exit_code=EXIT_USAGE, http_status=422),
    ErrorKind.OPERATOR: Answer(exit_code=EXIT_NOT_READY, http_status=500),
    ErrorKind.UNAVAILABLE: Answer(
        exit_code=EXIT_NOT_READY, http_status=503, retry_after_s=RETRY_AFTER_S
    ),
}


def answer(err: SessionRecallError) -> Answer:
    found = POLICY[err.kind]
    if isinstance(err, ShardsUnavailable):
        return replace(found, exit_code=EXIT_SEARCH_INCOMPLETE)
    return found


def tool_text(err: SessionRecallError) -> str:
    """What a model reads: one line, the message and its next step. The same for every
    kind: the MCP error flag and the HTTP status carry the kind to the application."""
    return f"Error: {err}"
