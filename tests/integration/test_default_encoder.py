"""The default encoder end to end, as a user meets it: `setup` fetches its weights
once (checked against the pinned digests), `ingest` enriches with it, and
`memory-search` answers with it; before any event has its vectors, the answer comes
from keywords and says so. The rest of the suite pins the static model (conftest);
this tier (`-m default_encoder`) runs what a fresh install runs."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from session_recall.config import Settings
from session_recall.embeddings import TransformerEmbedder
from session_recall.embeddings.local_models import MODELS
from session_recall.error_policy import EXIT_NOT_READY
from tests.support.cli import CLI
from tests.support.elasticsearch import REPO
from tests.support.models import SHARED_MODELS, shared_models

pytestmark = [pytest.mark.integration, pytest.mark.default_encoder]

DEFAULT = Settings.model_fields["embedder"].default
QUESTION = "which database did we choose?"


def _env(es_url: str, alias: str, home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "ELASTICSEARCH_URL": es_url, "SESSION_RECALL_INDEX": alias,
           "SESSION_RECALL_HOME": str(home), "SESSION_RECALL_MODELS": str(SHARED_MODELS),
           **extra}  # fmt: skip
    env.pop("SESSION_RECALL_EMBEDDER")  # the default, as a user who set nothing gets it
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_default_is_a_local_encoder_that_setup_fetches():
    assert DEFAULT in MODELS


def test_setup_fetches_the_encoder_and_memory_search_answers_with_it(
    es_url: str, alias: str, tmp_path: Path
):
    env = _env(es_url, alias, tmp_path)
    setup = _run(env, "setup")
    assert setup.returncode == 0, setup.stderr
    assert f"Encoder {DEFAULT}: its weights are in" in setup.stdout
    ingest = _run(env, "ingest", "--no-enrich", "samples/sessions.ndjson")
    assert ingest.returncode == 0, ingest.stderr
    asked = ["memory-search", "--user", "alice", "--format", "json", "--limit", "3", QUESTION]

    before = _run(env, *asked)
    assert before.returncode == 0, before.stderr
    document = json.loads(before.stdout)
    model = MODELS[DEFAULT].model_id
    assert document["mode"] == "hybrid"
    assert f"No event searched has {model}'s vectors yet" in document["notice"]

    embed = _run(env, "embed")
    assert embed.returncode == 0, embed.stderr
    after = json.loads(_run(env, *asked).stdout)
    assert after["mode"] == "hybrid" and after["notice"] is None
    assert "Elasticsearch" in after["hits"][0]["text"]
    assert after["hits"][0]["score"]["vectorRank"] is not None


def test_setup_that_cannot_fetch_the_weights_names_the_command_that_will(
    es_url: str, alias: str, tmp_path: Path
):
    nothing = tmp_path / "bin"  # a PATH without Maven
    nothing.mkdir()
    env = _env(es_url, alias, tmp_path, PATH=str(nothing),
               SESSION_RECALL_MODELS=str(tmp_path / "models"))  # fmt: skip
    done = _run(env, "setup")
    assert done.returncode == EXIT_NOT_READY, done.stderr
    *_, line = done.stderr.strip().splitlines()  # after the line saying it fetches
    assert line.startswith("Error: Maven (mvn) is needed")
    assert f"`session-recall models fetch {DEFAULT}`" in line
    assert "SESSION_RECALL_EMBEDDER=static" in line


def test_questions_run_on_a_session_of_their_own_and_repeat_from_a_cache():
    embedder = TransformerEmbedder(DEFAULT, shared_models(DEFAULT))  # as setup fetches it
    stored, questions = embedder.sessions()
    assert stored is not questions
    first = embedder.embed_query(QUESTION)
    assert embedder.embed_query(QUESTION) is first and embedder.query_cache_hits == 1
    [as_text] = embedder.embed([QUESTION])  # a stored text: the passage prefix, not cached
    assert as_text is not None and first is not None
    assert embedder.query_cache_hits == 1
