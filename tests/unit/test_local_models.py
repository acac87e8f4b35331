"""The local encoders' weights: read only from their folder, and only when they are the
files this release pins (the fetch itself, with Maven, runs in
tests/integration/test_memory_eval.py)."""

from pathlib import Path

import pytest

from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError
from session_recall.embeddings import TransformerEmbedder
from session_recall.embeddings.local_models import MODELS, installed, model
from session_recall.factories import embedder_for


def test_an_unknown_model_names_the_known_ones():
    with pytest.raises(ConfigurationError) as refused:
        model("e5-large")
    assert "e5-small" in refused.value.hint and "minilm" in refused.value.hint


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_model_not_fetched_names_the_command_that_fetches_it(name: str, tmp_path: Path):
    embedder = TransformerEmbedder(name, tmp_path)
    with pytest.raises(ConfigurationError) as refused:
        embedder.embed(["hello"])
    assert f"session-recall models fetch {name}" in refused.value.hint


def test_a_file_other_than_the_pinned_one_is_refused(tmp_path: Path):
    spec = MODELS["minilm"]
    folder = tmp_path / spec.name
    folder.mkdir()
    (folder / spec.weights).write_bytes(b"not the weights")
    (folder / spec.tokenizer).write_bytes(b"{}")
    with pytest.raises(ConfigurationError) as refused:
        installed("minilm", tmp_path)
    assert "not the file this release was checked with" in refused.value.message
    assert "models fetch minilm" in refused.value.hint


def test_each_model_id_names_its_weights_and_recipe_and_the_prefixes_are_e5s():
    ids = {spec.model_id for spec in MODELS.values()}
    assert len(ids) == len(MODELS)
    assert (MODELS["e5-small"].query_prefix, MODELS["e5-small"].passage_prefix) == (
        "query: ",
        "passage: ",
    )
    assert (MODELS["minilm"].query_prefix, MODELS["minilm"].passage_prefix) == ("", "")


def test_the_setting_picks_the_local_model_from_the_models_folder(tmp_path: Path):
    settings = Settings(SESSION_RECALL_EMBEDDER="e5-small", SESSION_RECALL_MODELS=tmp_path)
    embedder = embedder_for(settings)
    assert isinstance(embedder, TransformerEmbedder)
    assert embedder.model_id == MODELS["e5-small"].model_id and embedder.dims == 384
    home = Settings(SESSION_RECALL_HOME=tmp_path)
    assert home.models_folder == tmp_path / "models"


def test_the_docker_image_carries_the_default_encoders_pinned_weights():
    """The image runs offline: its build fetches the default model's artifact, at the
    version pinned here, and installs it through the digest check."""
    default = MODELS[Settings.model_fields["embedder"].default]
    dockerfile = (Path(__file__).parents[2] / "Dockerfile").read_text()
    _group, artifact, version = default.coordinate.split(":")
    assert f"-Dartifact={default.coordinate}" in dockerfile
    assert f"models fetch {default.name} --jar /tmp/weights/{artifact}-{version}.jar" in dockerfile
    assert "RUN pip install --no-cache-dir . " in dockerfile  # onnxruntime comes with it


def test_bge_small_pools_its_first_token_and_asks_with_its_instruction():
    bge = MODELS["bge-small"]
    assert bge.pooling == "cls" and bge.passage_prefix == ""
    assert bge.query_prefix.startswith("Represent this sentence")
    assert {MODELS[name].pooling for name in ("e5-small", "minilm")} == {"mean"}
