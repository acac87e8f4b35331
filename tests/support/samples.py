"""The bundled sample sessions and the reference outputs they give."""

from tests.support.elasticsearch import REPO

SAMPLE = REPO / "samples" / "sessions.ndjson"
THOUGHT = "inner-thought-7f3a: the user seems upset, look for the damaged order"
BOB_WORDS = "launch to Friday"

# cross_session_search outputs for alice, exactly as the reference renders them.
DECIDED = '{"sessionId":"s-trip","timestamp":"2026-06-03T09:16:40Z","type":"user_message","text":"We decided on Lisbon, the flights are cheaper."}'  # noqa: E501
GO_WITH = '{"sessionId":"s-stack","timestamp":"2026-06-20T14:05:10Z","type":"user_message","text":"OK, let\'s go with Elasticsearch and keep Postgres for billing."}'  # noqa: E501
BOTH = '{"sessionId":"s-notes","timestamp":"2026-07-02T08:03:00Z","type":"user_message","text":"We decided to invite the support team too, so let\'s go with the bigger venue."}'  # noqa: E501
