"""The package's public surface is exactly what `__all__` lists."""

import session_recall.http
import session_recall.indexer as indexer


def test_all_lists_every_public_name_and_only_those():
    public = {n for n in vars(indexer) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(indexer, n)).__name__ == "module"}
    assert set(indexer.__all__) == public - modules


def test_http_exports_exist():
    for name in session_recall.http.__all__:
        assert hasattr(session_recall.http, name)
