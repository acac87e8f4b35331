"""Issue 56's "what is the current X" on a real node: the dev split of the labelled set
stored session by session, consolidated, and each question asked through the memories
search. Its target is the current memory first for 0.95 of the questions; what this
release reaches, and asserts, is 22 of the 24 (0.92): "what are the wedding colours?"
names no word of "use sage green and cream" (its subject came from the turn before),
and one of d05's two questions on running is lost either way (BENCHMARKS.md)."""

import pytest
from elasticsearch import Elasticsearch

from bench import memory_current
from session_recall.embeddings import StaticEmbedder

pytestmark = pytest.mark.integration

REACHED = 22  # of 24; the target, 0.95, would be 23


def test_the_current_memory_comes_first_for_the_dev_questions(es: Elasticsearch):
    before = set(es.indices.get_alias(index="bench_current_*", ignore_unavailable=True).body)
    result = memory_current.measure(es, "dev", StaticEmbedder(), log=lambda _: None)
    assert result.questions == 24
    assert result.answered >= REACHED, "\n".join(result.misses)
    # Consolidation left the older statements as history, not beside what holds now.
    assert result.memories > result.current
    after = set(es.indices.get_alias(index="bench_current_*", ignore_unavailable=True).body)
    assert after == before  # the run's alias and indices are gone
    # Superseding keeps "use APA 7 for citations" current beside "actually, we'll use
    # Chicago style": the search puts the newer first, as the question names both.
    citations = [a for a in result.asked if a.question.topic == "citations"]
    assert [a.answered for a in citations] == [True], [a.miss() for a in citations]
