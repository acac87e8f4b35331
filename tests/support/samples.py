"""The bundled sample sessions and the reference outputs they give."""

from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.elasticsearch import REPO

if TYPE_CHECKING:
    from session_recall.config import Settings

SAMPLE = REPO / "samples" / "sessions.ndjson"
THOUGHT = "inner-thought-7f3a: the user seems upset, look for the damaged order"
BOB_WORDS = "launch to Friday"

# cross_session_search outputs for alice, exactly as the reference renders them.
DECIDED = '{"sessionId":"s-trip","timestamp":"2026-06-03T09:16:40Z","type":"user_message","text":"We decided on Lisbon, the flights are cheaper."}'  # noqa: E501
GO_WITH = '{"sessionId":"s-stack","timestamp":"2026-06-20T14:05:10Z","type":"user_message","text":"OK, let\'s go with Elasticsearch and keep Postgres for billing."}'  # noqa: E501
BOTH = '{"sessionId":"s-notes","timestamp":"2026-07-02T08:03:00Z","type":"user_message","text":"We decided to invite the support team too, so let\'s go with the bigger venue."}'  # noqa: E501


def ingested_samples(es_url: str, alias: str, home: Path, **settings: object) -> "Settings":
    """Settings for `alias` once the sample sessions are stored in it (without the
    enrichment pass) and searchable; `settings` adds to them by their variables' names."""
    from click.testing import CliRunner
    from elasticsearch import Elasticsearch

    from session_recall.cli import main
    from session_recall.config import Settings

    args = ["--es-url", es_url, "--index", alias, "--home", str(home)]
    result = CliRunner().invoke(main, [*args, "ingest", "--no-enrich", str(SAMPLE)])
    assert result.exit_code == 0, result.output
    client = Elasticsearch(es_url)
    client.indices.refresh(index=alias)
    client.close()
    return Settings.model_validate(
        {"ELASTICSEARCH_URL": es_url, "SESSION_RECALL_INDEX": alias,
         "SESSION_RECALL_HOME": home, **settings}
    )  # fmt: skip
