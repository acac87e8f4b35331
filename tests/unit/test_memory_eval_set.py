"""The evaluation set is what issue 10 asks of it, and its paraphrases are honest."""

from tests.support.memory_eval import QUERIES, SESSIONS, shared_content_words, texts_by_id


def test_the_set_has_enough_users_and_queries_of_each_kind():
    kinds = [query.kind for query in QUERIES]
    assert len(SESSIONS) >= 3 and {q.user for q in QUERIES} == set(SESSIONS)
    assert len(QUERIES) >= 40
    assert kinds.count("paraphrase") >= 25 and kinds.count("control") >= 10


def test_every_label_names_a_sample_event_of_the_querying_user():
    texts = texts_by_id()
    for query in QUERIES:
        assert query.relevant
        for event_id in query.relevant:
            assert event_id in texts and event_id.startswith(f"{query.user}-")


def test_no_paraphrase_shares_a_content_word_with_its_answers():
    texts = texts_by_id()
    for query in (q for q in QUERIES if q.kind == "paraphrase"):
        for event_id in query.relevant:
            assert not shared_content_words(query.text, texts[event_id]), (query, event_id)


def test_every_control_is_an_exact_phrase_of_its_answers():
    texts = texts_by_id()
    for query in (q for q in QUERIES if q.kind == "control"):
        for event_id in query.relevant:
            assert query.text.lower() in texts[event_id].lower(), (query, event_id)
