"""The ids a too-long line's start gives (`long_lines.ids_in`)."""

import pytest

from session_recall.indexer.long_lines import ids_in


@pytest.mark.parametrize(
    ("head", "ids"),
    [
        (
            b'{"event_id": "e-1", "userId":"u", "text": "very lo',
            {"event_id": "e-1", "user_id": "u"},
        ),
        (b'{"text": "very long', {}),
        (
            b'{"user_id": "u", "metadata": {"event_id": "inner"}, "session_id": "s", "te',
            {"user_id": "u", "session_id": "s"},
        ),
        (b'{"user_id": 7, "event_id": "e"', {"event_id": "e"}),
        (b"not json at all", {}),
        (b'[{"event_id": "e"}', {}),
        (b'{"event_id": "\xc3\xa9t\xc3', {}),  # cut inside the id's last character
    ],
)
def test_ids_in_reads_top_level_ids_up_to_the_first_value_cut(head: bytes, ids: dict) -> None:
    assert ids_in(head) == ids
