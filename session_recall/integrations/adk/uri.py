"""A `session-recall://` URI, as ADK's `--memory_service_uri` gives it: the index (its
host part) and the search mode (`?mode=`), never credentials."""

from typing import NamedTuple
from urllib.parse import parse_qs, urlsplit

from session_recall.core.errors import ConfigurationError
from session_recall.recall import SEARCH_MODES

SCHEME = "session-recall"


class UriOptions(NamedTuple):
    alias: str | None
    mode: str | None


def parse_uri(uri: str) -> UriOptions:
    """The index and mode a `session-recall://` URI names (or a URI of another scheme a
    `services.yaml` registered the service under); ConfigurationError for a URI that
    carries credentials or an unknown option."""
    parts = urlsplit(uri)
    usage = f"Use {SCHEME}://[INDEX][?mode={'|'.join(SEARCH_MODES)}]."
    if not parts.scheme:  # any scheme: a services.yaml may register the class under another
        raise ConfigurationError("The memory service URI has no scheme.", hint=usage)
    if "@" in uri:
        raise ConfigurationError(
            f"A {SCHEME}:// URI takes no credentials (they would end up in logs).",
            hint="Set ELASTICSEARCH_API_KEY, or ELASTICSEARCH_USERNAME and "
            "ELASTICSEARCH_PASSWORD, in the environment.",
        )
    options = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(options) - {"mode"})
    if unknown or parts.path.strip("/"):
        # Named, never quoted: a URI is where secrets end up by mistake.
        what = f"the option(s) {', '.join(unknown)}" if unknown else "a path"
        raise ConfigurationError(f"The memory service URI has {what}, unknown here.", hint=usage)
    mode = options.get("mode", [None])[-1]
    if mode is not None and mode not in SEARCH_MODES:
        raise ConfigurationError(f"Unknown search mode {mode!r}.", hint=usage)
    return UriOptions(alias=parts.netloc or None, mode=mode)
