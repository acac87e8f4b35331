import pytest
from click.testing import CliRunner

from session_recall.cli import main
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.core.errors import ConfigurationError
from session_recall.pins import elasticsearch_version
from tests.support.elasticsearch import REPO


def test_secrets_never_show_in_repr_or_dump():
    settings = Settings(ELASTICSEARCH_USERNAME="u", ELASTICSEARCH_PASSWORD="hunter2-secret")
    assert "hunter2-secret" not in repr(settings)
    assert "hunter2-secret" not in str(settings.model_dump())


def test_help_shows_no_secret_taken_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ELASTICSEARCH_API_KEY", "key-that-must-stay-hidden")
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0, result.output
    assert "key-that-must-stay-hidden" not in result.output


@pytest.mark.parametrize(
    "values",
    [
        {
            "ELASTICSEARCH_API_KEY": "k",
            "ELASTICSEARCH_USERNAME": "u",
            "ELASTICSEARCH_PASSWORD": "p",
        },
        {"ELASTICSEARCH_USERNAME": "u"},
        {"SESSION_RECALL_READ_API_KEY": "k", "SESSION_RECALL_READ_USERNAME": "u"},
        {"SESSION_RECALL_READ_PASSWORD": "p"},
        {"SESSION_RECALL_INDEX": "Upper"},
        {"SESSION_RECALL_EMBEDDER": "endpoint"},
        {
            "SESSION_RECALL_EMBEDDER": "endpoint",
            "SESSION_RECALL_EMBEDDINGS_URL": "http://127.0.0.1:11434/v1",
            "SESSION_RECALL_EMBEDDINGS_MODEL": "nomic-embed-text",
        },
    ],
)
def test_contradictory_or_incomplete_settings_are_refused(values: dict[str, str]):
    with pytest.raises(ConfigurationError):
        Settings(**values)


def test_several_comma_separated_urls_give_the_client_every_node():
    urls = "http://127.0.0.1:9200, http://127.0.0.1:9201,http://127.0.0.1:9202"
    settings = Settings(ELASTICSEARCH_URL=urls)
    assert settings.elasticsearch_urls() == [
        "http://127.0.0.1:9200",
        "http://127.0.0.1:9201",
        "http://127.0.0.1:9202",
    ]
    client = make_client(settings)
    assert len(client.transport.node_pool.all()) == 3
    client.close()


def test_each_of_several_urls_is_checked_and_no_password_is_shown():
    with pytest.raises(ConfigurationError) as refused:
        Settings(ELASTICSEARCH_URL="http://127.0.0.1:9200,user:secret@nowhere")
    assert "secret" not in str(refused.value)


def test_cli_reports_a_missing_url_with_the_next_step(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("ELASTICSEARCH_URL", raising=False)
    result = CliRunner().invoke(main, ["setup"])
    assert result.exit_code == 3, result.output  # not set up: the operator's move
    assert "ELASTICSEARCH_URL" in result.output


def test_the_version_is_pinned_once_and_compose_reads_it():
    assert elasticsearch_version().startswith("9.")
    compose = (REPO / "docker-compose.yml").read_text()
    assert "${ELASTICSEARCH_VERSION}" in compose
    assert elasticsearch_version() not in compose


def test_the_embedder_is_e5_small_by_default_and_its_api_key_stays_hidden(
    monkeypatch: pytest.MonkeyPatch,
):
    from session_recall.embeddings import EndpointEmbedder, StaticEmbedder, TransformerEmbedder
    from session_recall.factories import embedder_for

    monkeypatch.delenv("SESSION_RECALL_EMBEDDER")  # the suite pins the static model
    default = embedder_for(Settings())
    assert isinstance(default, TransformerEmbedder) and default.model_id == "e5-small-onnx-v1"
    static = embedder_for(Settings(SESSION_RECALL_EMBEDDER="static"))
    assert isinstance(static, StaticEmbedder) and static.dims == 64
    larger = embedder_for(
        Settings(SESSION_RECALL_EMBEDDER="static", SESSION_RECALL_EMBEDDINGS_DIMS=256)
    )
    assert larger is not None and larger.model_id == "wordllama-l2-supercat-256-v1"
    assert embedder_for(Settings(SESSION_RECALL_EMBEDDER="none")) is None
    settings = Settings(
        SESSION_RECALL_EMBEDDER="endpoint",
        SESSION_RECALL_EMBEDDINGS_URL="http://127.0.0.1:11434/v1",
        SESSION_RECALL_EMBEDDINGS_MODEL="nomic-embed-text",
        SESSION_RECALL_EMBEDDINGS_DIMS=768,
        SESSION_RECALL_EMBEDDINGS_API_KEY="embedding-key-secret",
    )
    remote = embedder_for(settings)
    assert isinstance(remote, EndpointEmbedder) and remote.model_id == "nomic-embed-text@768"
    assert "embedding-key-secret" not in repr(settings) + str(settings.model_dump())


def test_serve_reads_with_its_read_credentials_when_set_and_its_own_otherwise():
    own = Settings(ELASTICSEARCH_USERNAME="writer", ELASTICSEARCH_PASSWORD="w-secret")
    assert own.for_reads() == own
    apart = Settings(
        ELASTICSEARCH_USERNAME="writer",
        ELASTICSEARCH_PASSWORD="w-secret",
        SESSION_RECALL_READ_API_KEY="r-key-secret",
    )
    reads = apart.for_reads()
    assert reads.api_key is not None and reads.api_key.get_secret_value() == "r-key-secret"
    assert reads.username is None and reads.password is None
    assert "r-key-secret" not in repr(apart)


def test_variables_named_like_a_field_set_nothing(monkeypatch: pytest.MonkeyPatch):
    """HOME and USERNAME are set on most machines: neither is a setting of ours. Only
    the documented names (SESSION_RECALL_HOME, ELASTICSEARCH_USERNAME) are read."""
    for name in ("HOME", "USERNAME", "PASSWORD", "INDEX", "EMBEDDER", "MODELS"):
        monkeypatch.setenv(name, "/elsewhere" if name == "HOME" else "alice")
    monkeypatch.delenv("SESSION_RECALL_HOME", raising=False)
    monkeypatch.delenv("SESSION_RECALL_EMBEDDER")
    settings = Settings()
    assert settings.home.parts[-2:] == (".cache", "session-recall")
    assert settings.username is None and settings.password is None
    assert settings.index != "alice" and settings.embedder == "e5-small"
    assert settings.models_folder == settings.home / "models"
    # Code still passes fields by name.
    assert Settings(index="by-name").index == "by-name"
