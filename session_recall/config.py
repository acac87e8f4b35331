"""Configuration from the environment; every field has a matching CLI flag."""

from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from elastic_transport.client_utils import url_to_node_config
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from session_recall.core.errors import ConfigurationError
from session_recall.core.index_names import ALIAS_RULE, alias_problem
from session_recall.core.key_file import configured_key, kept_key, read_key
from session_recall.embeddings.endpoint import DEFAULT_MAX_CHARS
from session_recall.indexer.enrichment.model_miner import DEFAULT_MINER_TIMEOUT_S
from session_recall.recall.cursor_key import load_cursor_key
from session_recall.recall.rerank import RERANK_CANDIDATES
from session_recall.recall.rerank_endpoint import DEFAULT_RERANK_TIMEOUT_S
from session_recall.security.tokens import PROVIDER_MAX_TTL_S

DEFAULT_INDEX = "session-events"
# What a recall tool answers a model with (see `session_recall.tools.bounds`): each
# event's text is cut there, and the texts of one answer together there. A screenful
# of a turn, and ten of them: a tool result never floods the model's context.
DEFAULT_TOOL_HIT_CHARS = 2_000
DEFAULT_TOOL_ANSWER_CHARS = 20_000
# Where `tokens issue` keeps the key serve's own tokens are signed with, under home.
TOKEN_KEY_FILE = "token.key"
# HS256 wants a key of at least its hash's size.
MIN_TOKEN_KEY_BYTES = 32


def default_home() -> Path:
    """Where local state lives: cursor key, node state, downloaded distribution."""
    return Path.home() / ".cache" / "session-recall"


class Settings(BaseSettings):
    """How to reach Elasticsearch and which alias to use.

    Read from `ELASTICSEARCH_URL`, `ELASTICSEARCH_API_KEY`, `ELASTICSEARCH_USERNAME`,
    `ELASTICSEARCH_PASSWORD`, `ELASTICSEARCH_CA_CERTS`, `SESSION_RECALL_INDEX`,
    `SESSION_RECALL_HOME`, `SESSION_RECALL_CURSOR_KEY`, serve's token settings
    (`SESSION_RECALL_TOKEN_KEY`, `SESSION_RECALL_IDP_*`) and the embedder's. Secrets
    are `SecretStr`, so they never show in a repr, a log line or an error, and each may
    come from a file instead, named by its variable with `_FILE`
    (`ELASTICSEARCH_PASSWORD_FILE`).
    """

    # Fields are read from the environment by their aliases alone. populate_by_name lets
    # code pass `index=...`, but it would also read each field from a variable of its
    # own name (HOME into `home`, USERNAME into `username`): the prefix, which applies
    # to those names and never to an alias, keeps them out of reach.
    # An empty variable is an unset one (`ELASTICSEARCH_CA_CERTS=` names no file).
    model_config = SettingsConfigDict(
        env_prefix="SESSION_RECALL_SETTINGS_FIELD_",
        extra="ignore",
        populate_by_name=True,
        env_ignore_empty=True,
    )

    elasticsearch_url: str | None = Field(default=None, alias="ELASTICSEARCH_URL")
    api_key: SecretStr | None = Field(default=None, alias="ELASTICSEARCH_API_KEY")
    username: str | None = Field(default=None, alias="ELASTICSEARCH_USERNAME")
    password: SecretStr | None = Field(default=None, alias="ELASTICSEARCH_PASSWORD")
    ca_certs: Path | None = Field(default=None, alias="ELASTICSEARCH_CA_CERTS")
    # `serve`'s searches and probes, when an operator keeps them apart from its writes
    # (the recall role apart from ingest and enrich): see `for_reads`.
    read_api_key: SecretStr | None = Field(default=None, alias="SESSION_RECALL_READ_API_KEY")
    read_username: str | None = Field(default=None, alias="SESSION_RECALL_READ_USERNAME")
    read_password: SecretStr | None = Field(default=None, alias="SESSION_RECALL_READ_PASSWORD")
    index: str = Field(default=DEFAULT_INDEX, alias="SESSION_RECALL_INDEX")
    home: Path = Field(default_factory=default_home, alias="SESSION_RECALL_HOME")
    cursor_key: SecretStr | None = Field(default=None, alias="SESSION_RECALL_CURSOR_KEY")
    # The key of serve's own user tokens, kept apart from the cursor key: a cursor key
    # that leaks lets one forge cursors, which stay pinned to their user's searches; a
    # token key that leaks lets one mint a token for any user. Unset: `home/token.key`,
    # made by the first `tokens issue` (see `token_signing_key`).
    token_key: SecretStr | None = Field(default=None, alias="SESSION_RECALL_TOKEN_KEY")
    # An identity provider whose tokens serve takes too: its key set, issuer, the
    # audience its tokens name for serve, the claim that holds the user, and the claim
    # that holds an ADK app (unset: its tokens name plain users).
    idp_jwks_url: str | None = Field(default=None, alias="SESSION_RECALL_IDP_JWKS_URL")
    idp_issuer: str | None = Field(default=None, alias="SESSION_RECALL_IDP_ISSUER")
    idp_audience: str | None = Field(default=None, alias="SESSION_RECALL_IDP_AUDIENCE")
    idp_user_claim: str = Field(default="sub", min_length=1, alias="SESSION_RECALL_IDP_USER_CLAIM")
    idp_app_claim: str | None = Field(default=None, alias="SESSION_RECALL_IDP_APP_CLAIM")
    # The longest a provider's token may have left to live, in seconds: one that expires
    # later is refused (it cannot be revoked alone).
    idp_max_ttl: int = Field(default=PROVIDER_MAX_TTL_S, ge=1, alias="SESSION_RECALL_IDP_MAX_TTL")
    # Semantic recall (see `session_recall.factories`): a local transformer encoder by
    # default (e5-small, its weights fetched once by `session-recall setup`), the static
    # model where enrichment's lag matters more than recall, an OpenAI-compatible
    # endpoint, or none (memory_search on keywords only).
    embedder: Literal["static", "e5-small", "bge-small", "minilm", "endpoint", "none"] = Field(
        default="e5-small", alias="SESSION_RECALL_EMBEDDER"
    )
    # Whether serve and the framework adapters run the enrichment pass in the background
    # (stems, context, vectors); off, run `session-recall embed --follow` beside them.
    enrich: bool = Field(default=True, alias="SESSION_RECALL_ENRICH")
    # The recall tools' bounds, in characters: each event's text, and the texts of one
    # answer together (the CLI, HTTP, MCP and the framework adapters alike).
    tool_hit_chars: int = Field(
        default=DEFAULT_TOOL_HIT_CHARS, ge=1, alias="SESSION_RECALL_TOOL_HIT_CHARS"
    )
    tool_answer_chars: int = Field(
        default=DEFAULT_TOOL_ANSWER_CHARS, ge=1, alias="SESSION_RECALL_TOOL_ANSWER_CHARS"
    )
    # Where `session-recall setup` and `models fetch` put a local encoder's weights; by
    # default under the home folder.
    models: Path | None = Field(default=None, alias="SESSION_RECALL_MODELS")
    embeddings_url: str | None = Field(default=None, alias="SESSION_RECALL_EMBEDDINGS_URL")
    embeddings_model: str | None = Field(default=None, alias="SESSION_RECALL_EMBEDDINGS_MODEL")
    embeddings_dims: int | None = Field(
        default=None, ge=1, le=4096, alias="SESSION_RECALL_EMBEDDINGS_DIMS"
    )
    embeddings_api_key: SecretStr | None = Field(
        default=None, alias="SESSION_RECALL_EMBEDDINGS_API_KEY"
    )
    # For models that embed a question and a stored text apart: e5 takes "query: " and
    # "passage: ", bge-*-en-v1.5 a query instruction and no passage prefix; MiniLM and
    # most others neither (the default).
    embeddings_query_prefix: str = Field(default="", alias="SESSION_RECALL_EMBEDDINGS_QUERY_PREFIX")
    embeddings_passage_prefix: str = Field(
        default="", alias="SESSION_RECALL_EMBEDDINGS_PASSAGE_PREFIX"
    )
    # Texts are cut to this many characters before they are sent to the endpoint: its
    # model's input limit (a text over it is refused, and then goes without a vector).
    embeddings_max_chars: int = Field(
        default=DEFAULT_MAX_CHARS, ge=1, alias="SESSION_RECALL_EMBEDDINGS_MAX_CHARS"
    )

    # A reranker over memory_search's best fused hits (see `session_recall.factories`):
    # off by default; an endpoint of the common /rerank shape, or a local ONNX
    # cross-encoder that the operator adds (`session-recall models add-reranker`).
    reranker: Literal["none", "endpoint", "local"] = Field(
        default="none", alias="SESSION_RECALL_RERANKER"
    )
    reranker_url: str | None = Field(default=None, alias="SESSION_RECALL_RERANKER_URL")
    reranker_model: str | None = Field(default=None, alias="SESSION_RECALL_RERANKER_MODEL")
    reranker_api_key: SecretStr | None = Field(
        default=None, alias="SESSION_RECALL_RERANKER_API_KEY"
    )
    # The endpoint's deadline for one search's candidates, in seconds: past it, the
    # hits keep the fused order.
    reranker_timeout: float = Field(
        default=DEFAULT_RERANK_TIMEOUT_S, gt=0, le=60, alias="SESSION_RECALL_RERANKER_TIMEOUT"
    )
    # How many of the best fused hits the reranker scores again.
    reranker_candidates: int = Field(
        default=RERANK_CANDIDATES, ge=2, le=100, alias="SESSION_RECALL_RERANKER_CANDIDATES"
    )

    # What `consolidate` and `serve --consolidate` mine with (see `session_recall.factories`):
    # the built-in English miner by default, or a model behind an OpenAI-compatible
    # chat-completions endpoint with JSON-schema output.
    miner: Literal["builtin", "model"] = Field(default="builtin", alias="SESSION_RECALL_MINER")
    miner_url: str | None = Field(default=None, alias="SESSION_RECALL_MINER_URL")
    miner_model: str | None = Field(default=None, alias="SESSION_RECALL_MINER_MODEL")
    miner_api_key: SecretStr | None = Field(default=None, alias="SESSION_RECALL_MINER_API_KEY")
    # One request's deadline, in seconds: past it, the turns wait for the next pass.
    miner_timeout: float = Field(
        default=DEFAULT_MINER_TIMEOUT_S, gt=0, le=600, alias="SESSION_RECALL_MINER_TIMEOUT"
    )

    # Each secret may come from a file instead (`<VARIABLE>_FILE`, as Docker's secrets
    # give them): a command line, which every local account can read, never needs one.
    # Read once, here (`_secrets_from_files`); the path is not kept.
    password_secret_file: Path | None = Field(default=None, alias="ELASTICSEARCH_PASSWORD_FILE")
    api_key_secret_file: Path | None = Field(default=None, alias="ELASTICSEARCH_API_KEY_FILE")
    read_password_secret_file: Path | None = Field(
        default=None, alias="SESSION_RECALL_READ_PASSWORD_FILE"
    )
    read_api_key_secret_file: Path | None = Field(
        default=None, alias="SESSION_RECALL_READ_API_KEY_FILE"
    )
    cursor_key_secret_file: Path | None = Field(
        default=None, alias="SESSION_RECALL_CURSOR_KEY_FILE"
    )
    token_key_secret_file: Path | None = Field(default=None, alias="SESSION_RECALL_TOKEN_KEY_FILE")
    embeddings_api_key_secret_file: Path | None = Field(
        default=None, alias="SESSION_RECALL_EMBEDDINGS_API_KEY_FILE"
    )
    reranker_api_key_secret_file: Path | None = Field(
        default=None, alias="SESSION_RECALL_RERANKER_API_KEY_FILE"
    )
    miner_api_key_secret_file: Path | None = Field(
        default=None, alias="SESSION_RECALL_MINER_API_KEY_FILE"
    )

    @model_validator(mode="before")
    @classmethod
    def _secrets_from_files(cls, data: Any) -> Any:
        """Each `<VARIABLE>_FILE` given, read into `<VARIABLE>`; both given is refused."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        by_alias = {field.alias: name for name, field in cls.model_fields.items() if field.alias}
        for twin, twin_name in by_alias.items():
            variable = twin.removesuffix("_FILE")
            if twin == variable or variable not in by_alias:
                continue
            path = data.pop(twin, None) or data.pop(twin_name, None)
            if not path:
                continue
            if data.get(variable) or data.get(by_alias[variable]):
                raise ConfigurationError(
                    f"Both {variable} and {twin} are set.",
                    hint=f"Unset one of them ({twin}, the file, keeps the secret off command "
                    "lines and out of the environment).",
                )
            data[variable] = read_secret(twin, Path(path))
        return data

    @field_validator("elasticsearch_url")
    @classmethod
    def _usable_urls(cls, urls: str | None) -> str | None:
        """One URL, or several comma-separated (the nodes of one cluster), each checked
        as the client will read it, so a URL without a scheme is a message here rather
        than a ValueError from inside the client."""
        if not urls:
            return urls
        for url in urls.split(","):
            cls._usable_url(url.strip())
        return urls

    @property
    def models_folder(self) -> Path:
        """Where the local encoders' weights are (SESSION_RECALL_MODELS, or under home)."""
        return self.models or self.home / "models"

    def elasticsearch_urls(self) -> list[str]:
        """The configured nodes' URLs: the client spreads requests over them and sends
        a request that met a connection error to another."""
        return [url.strip() for url in (self.elasticsearch_url or "").split(",") if url.strip()]

    @staticmethod
    def _usable_url(url: str) -> str:
        try:
            node = url_to_node_config(url)
        except ValueError:
            node = None
        if node is None or node.scheme not in ("http", "https"):
            head, at, host = url.rpartition("@")
            scheme = head.split("://")[0] + "://" if "://" in head else ""
            shown = f"{scheme}***@{host}" if at else url  # credentials never shown
            raise ConfigurationError(
                f"ELASTICSEARCH_URL {shown!r} is not a URL Elasticsearch can be reached at.",
                hint="Give the scheme, the host and the port, e.g. http://127.0.0.1:9200.",
            )
        return url

    @model_validator(mode="after")
    def _check(self) -> "Settings":
        _one_credential(self.api_key, self.username, self.password, "ELASTICSEARCH_")
        _one_credential(
            self.read_api_key, self.read_username, self.read_password, "SESSION_RECALL_READ_"
        )
        if self.embedder == "endpoint" and not (
            self.embeddings_url and self.embeddings_model and self.embeddings_dims
        ):
            raise ConfigurationError(
                "SESSION_RECALL_EMBEDDER=endpoint needs the endpoint's URL, model and size.",
                hint="Set SESSION_RECALL_EMBEDDINGS_URL (e.g. http://127.0.0.1:11434/v1), "
                "SESSION_RECALL_EMBEDDINGS_MODEL and SESSION_RECALL_EMBEDDINGS_DIMS.",
            )
        if self.reranker == "endpoint" and not (self.reranker_url and self.reranker_model):
            raise ConfigurationError(
                "SESSION_RECALL_RERANKER=endpoint needs the endpoint's URL and model.",
                hint="Set SESSION_RECALL_RERANKER_URL (e.g. http://127.0.0.1:8080/v1) and "
                "SESSION_RECALL_RERANKER_MODEL.",
            )
        if self.miner == "model" and not (self.miner_url and self.miner_model):
            raise ConfigurationError(
                "SESSION_RECALL_MINER=model needs the chat-completions endpoint's URL and model.",
                hint="Set SESSION_RECALL_MINER_URL (e.g. http://127.0.0.1:8000/v1) and "
                "SESSION_RECALL_MINER_MODEL, or unset SESSION_RECALL_MINER for the built-in miner.",
            )
        _identity_provider(self)
        problem = alias_problem(self.index)
        if problem is not None:
            raise ConfigurationError(f"SESSION_RECALL_INDEX (--index): {problem}", hint=ALIAS_RULE)
        return self

    def for_reads(self) -> "Settings":
        """The settings of `serve`'s searches and probes: its read credentials
        (SESSION_RECALL_READ_*, the recall role) when set, else its own."""
        if not (self.read_api_key or self.read_username):
            return self
        return self.model_copy(
            update={
                "api_key": self.read_api_key,
                "username": self.read_username,
                "password": self.read_password,
            }
        )

    def signing_key(self) -> bytes:
        """The key that signs recall cursors (see `load_cursor_key`)."""
        configured = None if self.cursor_key is None else self.cursor_key.get_secret_value()
        return load_cursor_key(self.home, configured)

    def token_signing_key(self, *, create: bool = False) -> bytes | None:
        """The key of serve's own tokens: `SESSION_RECALL_TOKEN_KEY`, else the one kept
        in `home/token.key`, made when `create` (None when there is none)."""
        if self.token_key is not None:
            return configured_key(
                self.token_key.get_secret_value(),
                variable="SESSION_RECALL_TOKEN_KEY",
                min_bytes=MIN_TOKEN_KEY_BYTES,
            )
        path, lost = self.token_key_file, "every token issued before stops working"
        if create:
            return kept_key(path, lost=lost)
        try:
            return read_key(path, lost=lost)
        except FileNotFoundError:
            return None

    @property
    def token_key_file(self) -> Path:
        return self.home / TOKEN_KEY_FILE

    def with_overrides(self, **values: object) -> "Settings":
        """A copy with the given fields replaced, skipping the ones left at None."""
        given = {k: v for k, v in values.items() if v is not None}
        return self.model_validate({**self.model_dump(), **given})


def _one_credential(
    api_key: SecretStr | None, username: str | None, password: SecretStr | None, prefix: str
) -> None:
    """An API key, or a username with its password, or none: the variables named
    `{prefix}API_KEY`, `{prefix}USERNAME` and `{prefix}PASSWORD`."""
    if api_key and (username or password):
        raise ConfigurationError(
            "Both an API key and a username/password are set.",
            hint=f"Unset {prefix}API_KEY or {prefix}USERNAME/PASSWORD.",
        )
    if bool(username) != bool(password):
        raise ConfigurationError(
            "A username needs a password and a password needs a username.",
            hint=f"Set both {prefix}USERNAME and {prefix}PASSWORD.",
        )


def read_secret(variable: str, path: Path) -> str:
    """The secret held by the file `path` (its first line, without the line's end),
    named in errors by the variable or option that named the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) else "it is not UTF-8 text"
        raise ConfigurationError(
            f"{variable}: the file {str(path)!r} cannot be read ({why}).",
            hint="Point it at a file that holds the secret alone, readable by its owner "
            "only (chmod 600).",
        ) from None
    secret = text.splitlines()[0].strip() if text.strip() else ""
    if not secret:
        raise ConfigurationError(
            f"{variable}: the file {str(path)!r} is empty.",
            hint="Write the secret into it, on its first line.",
        )
    return secret


def _identity_provider(settings: Settings) -> None:
    """An identity provider is its key set, issuer and audience, all three; its keys
    come over HTTPS (in the clear, anyone on the way could swap them), or from this
    host."""
    values = {
        "SESSION_RECALL_IDP_JWKS_URL": settings.idp_jwks_url,
        "SESSION_RECALL_IDP_ISSUER": settings.idp_issuer,
        "SESSION_RECALL_IDP_AUDIENCE": settings.idp_audience,
    }
    missing = [name for name, value in values.items() if not value]
    given = settings.idp_app_claim or settings.idp_user_claim != "sub"
    if missing and (len(missing) < len(values) or given):
        raise ConfigurationError(
            f"An identity provider needs {', '.join(missing)} too.",
            hint="Set its JWKS URL, its issuer and the audience its tokens name for serve.",
        )
    url = urlsplit(settings.idp_jwks_url or "")
    local = url.hostname in ("localhost", "127.0.0.1", "::1")
    if settings.idp_jwks_url and not (url.scheme == "https" or (url.scheme == "http" and local)):
        raise ConfigurationError(
            "SESSION_RECALL_IDP_JWKS_URL must be an https:// URL (http:// only on this host).",
            hint="Give the provider's JWKS URL, e.g. https://idp.example.com/.well-known/jwks.json.",
        )


def settings_problem(err: ValidationError) -> str:
    """A validation error of `Settings` as one line naming the variable: `SESSION_RECALL_
    EMBEDDER: Input should be 'static', 'endpoint' or 'none'`."""
    problems = []
    for error in err.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "configuration"
        problems.append(f"{where}: {str(error['msg']).removeprefix('Value error, ')}")
    return "; ".join(problems) + "."
