"""The LoCoMo harness (`python -m bench.memory_eval`) end to end on the real node, on a
small conversation of our own in LoCoMo's format."""

from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from bench import locomo
from bench.memory_eval import MODES, evaluate, table
from session_recall.config import Settings

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parent.parent / "support" / "data" / "locomo"


def test_the_harness_stores_a_conversation_and_scores_every_mode(
    es: Elasticsearch, es_url: str, tmp_path: Path
):
    settings = Settings(ELASTICSEARCH_URL=es_url, SESSION_RECALL_HOME=tmp_path)
    conversations = locomo.load(FIXTURE, (7,))

    results = evaluate(es, settings, conversations, MODES, log=lambda _text: None)

    assert set(results) == set(MODES)
    keyword = results["keyword"]
    assert keyword["questions"] == 4
    # Each question shares a word with its answer ("Pepper", "band", "bake"...): keyword
    # search finds every one among ten hits of eight turns.
    assert keyword["overall"].hit_at_10 == 1.0
    assert "| keyword | all | 4 |" in table(results)
    assert not [i for i in es.indices.get_alias(name="bench-locomo-*").body], "alias left"
