"""What the benchmark's default install runs with: the encoder `Settings` defaults to,
its weights where this process finds them, and a run that stops before timing
anything when they are not there."""

from pathlib import Path

import pytest

from bench import configuration
from bench.run import main
from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError
from session_recall.embeddings.local_models import MODELS


def test_the_default_is_the_encoder_the_settings_default_to():
    default = configuration.default()
    assert default.embedder == Settings.model_fields["embedder"].default
    assert default.enrich and default.env["SESSION_RECALL_EMBEDDER"] == default.embedder


def test_the_commands_read_the_weights_where_this_process_finds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The benchmark runs each command with a home of its own: under it there are no
    weights, and `ingest` would store without vectors."""
    monkeypatch.delenv("SESSION_RECALL_MODELS", raising=False)
    monkeypatch.setenv("SESSION_RECALL_HOME", str(tmp_path))
    for setup in (configuration.default(), configuration.storing_only(native_core=False)):
        assert setup.env["SESSION_RECALL_MODELS"] == str(tmp_path / "models")


def test_a_default_whose_weights_are_missing_is_named_with_the_fetch_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("SESSION_RECALL_MODELS", str(tmp_path))
    default = configuration.default()
    assert default.embedder in MODELS
    with pytest.raises(ConfigurationError, match=f"session-recall models fetch {default.embedder}"):
        default.check()
    configuration.storing_only(native_core=False).check()  # no encoder: nothing to fetch


@pytest.mark.parametrize("mode", [["--semantic"], []])
def test_a_run_of_the_default_stops_before_timing_anything_without_its_weights(
    mode: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    monkeypatch.setenv("SESSION_RECALL_MODELS", str(tmp_path / "none"))
    nowhere = "http://127.0.0.1:9"  # never asked: the run stops first
    with pytest.raises(SystemExit) as stopped:
        main([*mode, "--quick", "--es-url", nowhere, "--out-dir", str(tmp_path / "out")])
    assert stopped.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: The local model") and "models fetch" in err, err
    assert not (tmp_path / "out").exists()
