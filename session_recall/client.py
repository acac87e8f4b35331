"""Builds the Elasticsearch client every command uses, and checks the server first."""

import ssl
from collections.abc import Sequence
from typing import Any

import orjson
from elasticsearch import (
    ApiError,
    AsyncElasticsearch,
    AuthenticationException,
    AuthorizationException,
    Elasticsearch,
    OrjsonSerializer,
    SSLError,
    TransportError,
)
from elasticsearch.serializer import NdjsonSerializer

from session_recall.config import Settings
from session_recall.core.access import BLOCKED, Role, blocked_hint, role_hint
from session_recall.core.errors import ConfigurationError, ElasticsearchUnavailable
from session_recall.endpoint_problems import endpoint_problem, node_urls
from session_recall.indexer.errors import refusal_reason
from session_recall.pins import elasticsearch_major

# The client's default of 10 s is too short for a bulk chunk on a busy 2-core machine,
# and whole-request retries without backoff hammer a node that is already struggling.
REQUEST_TIMEOUT_S = 30
MAX_RETRIES = 3


_NDJSON = "application/x-ndjson"


class _OrjsonNdjson(NdjsonSerializer):
    """NDJSON bodies (`msearch`, `bulk`) through orjson too: the client's own NDJSON
    serializer uses the standard library's json, several times slower."""

    def json_dumps(self, data: Any) -> bytes:
        return orjson.dumps(data, default=self.default)

    def json_loads(self, data: bytes) -> Any:
        return orjson.loads(data)

    def dumps(self, data: Any) -> bytes:
        # A prebuilt body (the writer's bulk) goes out as it is: the client's own
        # `dumps` copies it twice (about a MB per chunk) to end up with the same bytes.
        if isinstance(data, bytes) and data.endswith(b"\n"):
            return data
        return super().dumps(data)


def make_client(settings: Settings, **overrides: Any) -> Elasticsearch:
    """A client for `settings.elasticsearch_url` (one node, or several comma-separated),
    with orjson bodies and sane retries: a request that meets a connection error or a
    timeout is sent again to another node, up to MAX_RETRIES times."""
    return Elasticsearch(settings.elasticsearch_urls(), **_options(settings, overrides))


def make_async_client(settings: Settings, **overrides: Any) -> AsyncElasticsearch:
    """`make_client`'s async twin, on httpx (a dependency already): for adapters whose
    framework awaits its searches (LangChain's `ainvoke`)."""
    options = {"node_class": "httpxasync", **_options(settings, overrides)}
    return AsyncElasticsearch(settings.elasticsearch_urls(), **options)


def _options(settings: Settings, overrides: dict[str, Any]) -> dict[str, Any]:
    if not settings.elasticsearch_url:
        raise ConfigurationError(
            "No Elasticsearch URL is configured.",
            hint="Set ELASTICSEARCH_URL (or --es-url), or run `session-recall node start`.",
        )
    options: dict[str, Any] = {
        "request_timeout": REQUEST_TIMEOUT_S,
        "max_retries": MAX_RETRIES,
        "retry_on_timeout": True,
        "serializers": {"application/json": OrjsonSerializer(), _NDJSON: _OrjsonNdjson()},
    }
    if settings.api_key:
        options["api_key"] = settings.api_key.get_secret_value()
    if settings.username and settings.password:
        options["basic_auth"] = (settings.username, settings.password.get_secret_value())
    if settings.ca_certs:
        options["ca_certs"] = _ca_file(settings)
    options.update(overrides)
    return options


def _ca_file(settings: Settings) -> str:
    """The CA file, checked before the client takes it: the client's own errors are a
    traceback (a CA with an http:// URL) or "certificate not trusted" (a file that is
    missing or holds no certificate), neither of which says what is wrong."""
    path = settings.ca_certs
    assert path is not None
    plain = [url for url in settings.elasticsearch_urls() if url.lower().startswith("http://")]
    if plain:
        https = "https://" + plain[0].split("://", 1)[1]
        raise ConfigurationError(
            f"ELASTICSEARCH_CA_CERTS is set, but ELASTICSEARCH_URL {plain[0]!r} is plain "
            "HTTP: a CA is for HTTPS.",
            hint=f"Use {https!r} (a secured node speaks HTTPS only), or unset "
            "ELASTICSEARCH_CA_CERTS for a node without TLS.",
        )
    try:
        ssl.create_default_context(cafile=str(path))
    except OSError as err:  # ssl.SSLError is one: a file that holds no PEM certificate
        why = err.strerror if not isinstance(err, ssl.SSLError) else "it holds no PEM certificate"
        raise ConfigurationError(
            f"ELASTICSEARCH_CA_CERTS {str(path)!r} cannot be used: {why or err}.",
            hint="Point it at the CA certificate (PEM, '-----BEGIN CERTIFICATE-----'); "
            "`session-recall node start --secure` prints the local node's.",
        ) from None
    return str(path)


def failover_only(settings: Settings) -> dict[str, Any]:
    """Client options for requests that must end within a deadline: no retry after a
    timeout or an error answer (the caller's own retries know the deadline), but one
    per other node after a connection error, which a node that is down gives at once."""
    return {
        "max_retries": len(settings.elasticsearch_urls()) - 1,
        "retry_on_timeout": False,
        "retry_on_status": (),
    }


def access_problem(
    err: BaseException,
    *,
    needed: tuple[Role, ...] = (),
    alias: str = "the alias",
    urls: Sequence[str] = (),
) -> ConfigurationError | None:
    """What a refusal of the connection or the credentials means, and what to do: a
    certificate not trusted or TLS where there is none (at `urls`, the URLs tried),
    credentials refused, a privilege missing (`needed`: the roles the refused work
    needs). None for any other error. The credentials are never repeated."""
    if isinstance(err, AuthorizationException) and err.error == BLOCKED:
        return ConfigurationError(
            f"Elasticsearch refused this: {refusal_reason(err)}.", hint=blocked_hint(alias)
        )
    if isinstance(err, AuthorizationException):
        return ConfigurationError(
            f"Elasticsearch refused this to the credentials: {refusal_reason(err)}.",
            hint=role_hint(*(needed or ("admin",))),
        )
    if isinstance(err, SSLError):
        problem = endpoint_problem(err, list(urls))
        assert isinstance(problem, ConfigurationError)
        return problem
    if isinstance(err, AuthenticationException):
        return ConfigurationError(
            "Elasticsearch refused the credentials (401): none were given, or they are "
            "wrong or expired.",
            hint="Set ELASTICSEARCH_API_KEY, or ELASTICSEARCH_USERNAME and "
            "ELASTICSEARCH_PASSWORD; on the local secured node, `session-recall users "
            "create --role ROLE` makes a user.",
        )
    return None


def server_version(client: Elasticsearch) -> str | None:
    """The version of the node the client talks to; None when the credential may not
    ask (a least-privilege role has no `monitor`): the client's compatibility header
    still makes a server of another major refuse every request.

    Uses the nodes-info API rather than `GET /`: the integ-test distribution has no
    root endpoint (it answers 405), and nodes info works on every distribution.
    """
    try:
        info = client.nodes.info(node_id="_local", metric="_none", filter_path="nodes.*.version")
    except AuthorizationException:
        return None
    except (ApiError, TransportError) as err:
        urls = node_urls(client)
        problem = access_problem(err, urls=urls) or endpoint_problem(err, urls)
        if problem is not None:
            raise problem from None
        raise ElasticsearchUnavailable(
            f"Elasticsearch did not answer: {type(err).__name__}.",
            hint=f"Check ELASTICSEARCH_URL ({', '.join(urls)} was tried; a secured node needs "
            "https://) and that the node runs (`session-recall node status`).",
        ) from None
    nodes = info.body.get("nodes") or {}
    if not nodes:
        raise ElasticsearchUnavailable("The server reported no node and no version.")
    return str(next(iter(nodes.values()))["version"])


def check_server(client: Elasticsearch) -> str | None:
    """Fail early, with a clear message, when the server's major differs from ours, or
    the connection or the credentials are refused."""
    version = server_version(client)
    if version is None:
        return None
    major = int(version.split(".", 1)[0])
    if major != elasticsearch_major():
        raise ElasticsearchUnavailable(
            f"Elasticsearch {version} answered, but this release works with "
            f"Elasticsearch {elasticsearch_major()}.x only.",
            hint=f"Point ELASTICSEARCH_URL at an Elasticsearch {elasticsearch_major()}.x node.",
        )
    return version
