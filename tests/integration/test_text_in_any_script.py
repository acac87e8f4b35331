"""Keyword recall finds words as people type them, in any script, on every searcher:
Chinese and Japanese inside unspaced text, Korean and Cyrillic words, Latin words
inside CJK text, composed accents against decomposed ones, and never a fragment of a
Latin word. The cases are Google ADK's own (`test_search_memory_non_latin` of its
in-memory memory service). Events stored before the `words` field existed still match
as they did."""

import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from session_recall.cli import main
from session_recall.core.instant import Instant
from session_recall.recall import Searchers
from session_recall.recall.cross_conversation_settings import CrossConversationSettings
from tests.support.ndjson import write_ndjson

pytestmark = pytest.mark.integration

KEY = b"any-script-test-cursor-key-32by!"
ON = CrossConversationSettings(enabled=True)
# Recent: the cross-conversation search looks at a contact's recent conversations.
STAMP = Instant(Instant.now().nanos - 3600 * 10**9).to_elasticsearch()
NFD = "NFD"

# (stored text, query, found): verbatim from ADK 2.13's tests.
CASES = [
    ("私の名前は太郎です", "太郎", True),
    ("私の名前は太郎です", "天気", False),
    ("我喜欢机器学习", "机器学习", True),
    ("我喜欢机器学习", "天气预报", False),
    ("제 이름은 민수입니다", "민수입니다", True),
    ("Меня зовут Алексей", "Алексей", True),
    ("太郎 works at ABC Corp", "太郎", True),
    ("太郎 works at ABC Corp", "ABC", True),
    ("私はPythonでADKを使っています", "Python", True),
    ("私はPythonでADKを使っています", "adk", True),
    ("我用Python写代码", "python", True),
    ("私はPythonでADKを使っています", "使って", True),
    ("私はPythonでADKを使っています", "Java", False),
    ("I like to code in Python.", "thon", False),
    ("私はPythonでADKを使っています", "thon", False),
    (unicodedata.normalize(NFD, "私はCaféでADKを使っています"), "Café", True),
    (unicodedata.normalize(NFD, "私はCaféでADKを使っています"), "café", True),
    (unicodedata.normalize(NFD, "私はCaféでADKを使っています"), "Ruby", False),
    (unicodedata.normalize(NFD, "Meet at the Café"), "Café", True),
    ("Meet at the Café", unicodedata.normalize(NFD, "Café"), True),
    (unicodedata.normalize(NFD, "プログラミングを学ぶ"), "プログラミング", True),
    (unicodedata.normalize(NFD, "제 이름은 민수입니다"), "민수입니다", True),
]


def _event(case: int, text: str) -> dict[str, str]:
    return {
        "user_id": f"case-{case}",
        "session_id": "s",
        "contact_id": "c",
        "inbox_id": "i",
        "event_id": f"e{case}",
        "timestamp": STAMP,
        "type": "user_message",
        "text": text,
    }


@pytest.fixture(scope="module")
def searchers(es: Elasticsearch, es_url: str, module_alias: str, tmp_path_factory) -> Searchers:
    """Every case stored by `ingest` (the native core leaves their texts to the Python
    path), as its own user."""
    folder: Path = tmp_path_factory.mktemp("scripts")
    source = write_ndjson(
        folder / "cases.ndjson", [_event(n, t) for n, (t, _, _) in enumerate(CASES)]
    )
    run = CliRunner().invoke(
        main, ["--es-url", es_url, "--index", module_alias, "ingest", str(source), "--no-enrich"]
    )
    assert run.exit_code == 0, run.output
    return Searchers(es, module_alias, KEY)


@pytest.mark.parametrize(("case", "text", "query", "found"), [(n, *c) for n, c in enumerate(CASES)])
def test_every_searcher_finds_words_as_typed_and_never_a_fragment(
    searchers: Searchers, case: int, text: str, query: str, found: bool
) -> None:
    user = f"case-{case}"
    answers = {
        "memory_search": len(searchers.memory(user_id=user).search(query, mode="keyword").hits),
        "cross_session_search": len(searchers.cross_session(user_id=user).search(query).items),
        "conversation_search": len(
            searchers.conversation(user_id=user, session_id="s").search(query).items
        ),
        "cross_conversation": len(
            searchers.cross_conversation(user_id=user, contact_id="c", inbox_id="i", settings=ON)
            .search(query, current_session_id=None)
            .items
        ),
    }
    assert answers == dict.fromkeys(answers, int(found)), (text, query)


def test_an_event_stored_before_the_words_field_still_matches_as_it_did(
    es: Elasticsearch, searchers: Searchers, module_alias: str
) -> None:
    """Stored by an earlier release: `text` only. What the standard analyzer matched
    then (a composed accent, a Han phrase) it still matches."""
    partition = next(iter(es.indices.get_alias(name=module_alias)))
    body = {**_event(99, "Rendez-vous au Café, 机器学习 ensuite"), "conversation_type": "chat"}
    es.index(index=partition, id="old", routing=body["user_id"], document=body, refresh=True)
    memory = searchers.memory(user_id="case-99")
    recall = searchers.cross_session(user_id="case-99")
    for query in ("Café", "机器学习", "rendez"):
        assert len(memory.search(query, mode="keyword").hits) == 1, query
        assert len(recall.search(query).items) == 1, query
    assert not recall.search("thon").items
