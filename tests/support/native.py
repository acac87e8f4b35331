"""The native core in tests: a case that asks for it runs wherever the core can be
built, fails where it could be and was not, and skips, saying why, only where no Rust
toolchain is there to build it."""

import shutil

import pytest

from session_recall.indexer import native

_NOT_BUILT = "cargo is here but the native core is not installed: run scripts/test"
_NO_CARGO = "the native core cannot be built here (no cargo)"


def require_core() -> None:
    """Return when the core is installed; otherwise fail, or skip when there is no cargo."""
    if native.installed():
        return
    if shutil.which("cargo"):
        pytest.fail(_NOT_BUILT)
    pytest.skip(_NO_CARGO)


# A case that sets SESSION_RECALL_NATIVE=1 asks for the core: the product stops with
# `NativeCoreMissing` when it is absent, so the case fails; it is skipped only here.
needs_core = pytest.mark.skipif(
    not native.installed() and shutil.which("cargo") is None, reason=_NO_CARGO
)


def ingest_setting() -> str:
    """SESSION_RECALL_NATIVE for a case that goes through `ingest` once and wants its
    native path where there is one: "1" where the core is installed or cargo could
    build it (so a core that is missing there fails the case), "0" where neither."""
    return "1" if native.installed() or shutil.which("cargo") else "0"


# SESSION_RECALL_NATIVE's values for the two write paths, as parameters.
PATHS = [
    pytest.param("1", id="native", marks=needs_core),
    pytest.param("0", id="python"),
]
