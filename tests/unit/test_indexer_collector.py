"""A bulk load tunes the cyclic collector for its length, and leaves it as it was."""

import gc

from session_recall.indexer.collector import tuned_for_load


def test_the_collector_is_tuned_inside_a_load_and_restored_after():
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with tuned_for_load():
        assert gc.get_threshold()[0] >= 50_000
        assert gc.get_freeze_count() > frozen
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen


def test_nested_loads_restore_the_collector_when_the_last_one_ends():
    before = gc.get_threshold()
    with tuned_for_load():
        with tuned_for_load():
            pass
        assert gc.get_threshold()[0] >= 50_000  # the outer load still runs
    assert gc.get_threshold() == before


def test_a_failing_load_still_restores_the_collector():
    before = gc.get_threshold()
    try:
        with tuned_for_load():
            raise RuntimeError("the load failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before
