"""The local encoders' weights, fetched once for the suite (Maven keeps the artifact
too), as `session-recall setup` does for a user."""

from pathlib import Path

from session_recall.embeddings.local_models import install
from tests.support.elasticsearch import REPO

SHARED_MODELS = REPO / ".cache" / "models"


def shared_models(name: str) -> Path:
    """The folder holding model `name`'s checked weights, fetched there if missing."""
    install(name, SHARED_MODELS)
    return SHARED_MODELS
