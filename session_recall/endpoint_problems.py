"""What is at the URL a client tried, when it is not an Elasticsearch that answers: a
plain HTTP node reached with https://, a TLS node reached with http://, a certificate
not trusted, a server that answers but is not Elasticsearch, a path after the port,
Each message names the URL tried and what was found there; the
CLI (`client.server_version`) and serve's `/readyz` say the same.
"""

import re
import socket
import ssl
from urllib.parse import urlsplit

from elastic_transport import ApiResponseMeta, NodeConfig
from elastic_transport import ConnectionError as TransportConnectionError
from elastic_transport.client_utils import url_to_node_config
from elasticsearch import ApiError, Elasticsearch, SSLError

from session_recall.core.errors import ConfigurationError

# OpenSSL's words for a peer that answered a ClientHello with something not TLS (a
# plain HTTP server): the version bytes it read were "HTTP/1.1 4..".
_NOT_TLS = re.compile(
    r"WRONG_VERSION_NUMBER|RECORD_LAYER_FAILURE|packet length too long|unknown protocol",
    re.IGNORECASE,
)
# How long a TLS handshake may take when finding out whether an http:// URL that does
# not answer plain HTTP speaks TLS: a node on the network answers within it.
_TLS_PROBE_S = 2.0
_PRODUCT = "x-elastic-product"


def node_urls(client: Elasticsearch) -> list[str]:
    """The URLs of the nodes `client` was given, as ELASTICSEARCH_URL names them (never
    with credentials: a node's config holds none)."""
    return [_url(node.config) for node in client.transport.node_pool.all()]


def configured_urls(urls: list[str]) -> list[str]:
    """ELASTICSEARCH_URL's nodes as a message may name them: without the credentials a
    URL may hold (`https://user:pass@host`)."""
    return [_url(url_to_node_config(url)) for url in urls]


def endpoint_problem(err: Exception, urls: list[str]) -> ConfigurationError | None:
    """What the URL(s) tried held, when it is not an Elasticsearch that answers: TLS
    where there is none or the reverse, a certificate not trusted, another server, a
    path; None for any other error (nothing listening, a refusal, an overload...)."""
    tried = " and ".join(urls) or "ELASTICSEARCH_URL"
    if isinstance(err, SSLError):
        return _tls_problem(err, tried)
    if isinstance(err, ApiError):
        return _answer_problem(err, tried)
    if isinstance(err, TransportConnectionError):
        plain = [url for url in urls if url.lower().startswith("http://")]
        speaking_tls = [url for url in plain if _speaks_tls(url)]
        if speaking_tls:
            https = "https://" + speaking_tls[0].split("://", 1)[1]
            return ConfigurationError(
                f"The server at {speaking_tls[0]} speaks https (TLS), not plain http: it "
                "closed the plain HTTP request.",
                hint=f"Use {https} in ELASTICSEARCH_URL (or --es-url), with "
                "ELASTICSEARCH_CA_CERTS set to its CA (a local secured node prints its path).",
            )
    return None  # nothing there, or a node away: the callers' own words (retry) hold


def _tls_problem(err: SSLError, tried: str) -> ConfigurationError:
    if _NOT_TLS.search(str(err.message)):
        return ConfigurationError(
            f"The server at {tried} does not serve https: it answered the TLS handshake in "
            "plain HTTP.",
            hint="Use http:// in ELASTICSEARCH_URL (or --es-url), or turn TLS on at the node.",
        )
    return ConfigurationError(
        f"The certificate of the server at {tried} is not trusted (or the URL's host is not "
        "one the certificate names).",
        hint="Set ELASTICSEARCH_CA_CERTS (or --ca-certs) to the file of the CA that "
        "signed it; `session-recall node start --secure` prints the local node's.",
    )


def foreign_answer(meta: ApiResponseMeta, tried: str = "ELASTICSEARCH_URL") -> str | None:
    """What answered, when an answer (`meta`) is not Elasticsearch's; None when it is.
    The client checks a body's answers itself, not a HEAD's (an `exists`)."""
    headers = {name.lower() for name in (meta.headers or {})}
    if _PRODUCT in headers:
        return None
    url = _url(meta.node) if isinstance(meta.node, NodeConfig) else tried
    return (
        f"The server at {url} answered HTTP {meta.status}, but it is not Elasticsearch (its "
        "answer lacks the X-Elastic-Product header)."
    )


_ELASTICSEARCH_URL = (
    "Point ELASTICSEARCH_URL at an Elasticsearch node: its scheme, host and port, e.g. "
    "http://127.0.0.1:9200."
)


def _answer_problem(err: ApiError, tried: str) -> ConfigurationError | None:
    node = getattr(err.meta, "node", None)
    url = _url(node) if isinstance(node, NodeConfig) else tried
    status = err.meta.status
    foreign = foreign_answer(err.meta, tried)
    if foreign is not None:
        return ConfigurationError(foreign, hint=_ELASTICSEARCH_URL)
    path = urlsplit(url).path.rstrip("/")
    if path and status in (400, 404):
        root = url[: len(url) - len(urlsplit(url).path)]
        return ConfigurationError(
            f"Elasticsearch at {root} has no endpoint under {path}, the path of "
            f"ELASTICSEARCH_URL {url} (HTTP {status}).",
            hint=f"Drop the path: ELASTICSEARCH_URL={root}, unless a proxy there serves "
            "Elasticsearch under it.",
        )
    return None


def _speaks_tls(url: str) -> bool:
    """Whether a TLS handshake with the host and port of `url` completes (whatever its
    certificate: this only finds out what is listening)."""
    parts = urlsplit(url)
    if parts.hostname is None:
        return False
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        address = (parts.hostname, parts.port or 80)
        with (
            socket.create_connection(address, _TLS_PROBE_S) as raw,
            context.wrap_socket(raw, server_hostname=parts.hostname),
        ):
            return True
    except (OSError, ValueError):
        return False


def _url(node: NodeConfig) -> str:
    host = f"[{node.host}]" if ":" in node.host else node.host
    return f"{node.scheme}://{host}:{node.port}{node.path_prefix}"
