"""What a measured `ingest` or `serve` ran with: the embedder, whether the enrichment
pass ran, and the native core or the Python path. Every figure of the report names one.

The *default* is what a default install runs: the embedder `Settings` defaults to,
enrichment on, and the native core where it is installed (where `cargo` built it).
The others are stripped down, to show what each part costs: storing only (no embedder,
no enrichment), on the native core and on the Python path.

Each sets its environment in full (SESSION_RECALL_EMBEDDER, SESSION_RECALL_NATIVE), so
that nothing of the shell that runs the benchmark leaks into a figure; asked for and
absent, the native core stops the run (`NativeCoreMissing`) rather than let the Python
path pass for it. The commands run with a home folder of the benchmark's own, so each
is pointed at the local encoders' weights where this process finds them
(SESSION_RECALL_MODELS): under another home, `ingest` would find none and store without
vectors, and the default's figures would be those of no embedder. `check` stops a run
whose encoder is not installed, before anything is timed.
"""

from dataclasses import asdict, dataclass
from typing import Any

from session_recall.config import Settings
from session_recall.embeddings.local_models import MODELS, installed
from session_recall.indexer import native


def default_embedder() -> str:
    """The embedder a default install runs (the settings' own default)."""
    return str(Settings.model_fields["embedder"].default)


@dataclass(frozen=True)
class Configuration:
    name: str  # how the report's rows and JSON call it
    embedder: str  # SESSION_RECALL_EMBEDDER: a model's name, or "none"
    enrich: bool  # the enrichment pass ran (stems, context, vectors)
    native: bool  # the native core read the lines (else the Python path)

    @property
    def env(self) -> dict[str, str]:
        return {
            "SESSION_RECALL_EMBEDDER": self.embedder,
            "SESSION_RECALL_NATIVE": "1" if self.native else "0",
            "SESSION_RECALL_MODELS": str(Settings().models_folder),
        }

    def check(self) -> None:
        """Raises `ConfigurationError` naming the fetch command when the embedder is a
        local encoder whose weights are not where `env` points the commands."""
        if self.embedder in MODELS:
            installed(self.embedder, Settings().models_folder)

    @property
    def label(self) -> str:
        """The configuration in words, as every figure of it is labelled."""
        embedder = "no embedder" if self.embedder == "none" else f"`{self.embedder}` embedder"
        enrichment = "enrichment on" if self.enrich else "no enrichment"
        core = "native core" if self.native else "Python path"
        return f"{embedder}, {enrichment}, {core}"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "label": self.label}


def default() -> Configuration:
    return Configuration("default", default_embedder(), enrich=True, native=native.installed())


def static_model(*, native_core: bool) -> Configuration:
    """A default install with the static model configured: the fast offline choice."""
    return Configuration("static", "static", enrich=True, native=native_core)


def storing_only(*, native_core: bool) -> Configuration:
    name = "store_native" if native_core else "store_python"
    return Configuration(name, "none", enrich=False, native=native_core)


def label_of(run: dict[str, Any]) -> str:
    """The label of a run's configuration, from its JSON (the report's input)."""
    configuration = run.get("configuration")
    return "configuration not recorded" if configuration is None else str(configuration["label"])
