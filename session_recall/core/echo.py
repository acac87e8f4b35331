"""Text cut to a bound, with a mark that says how long the whole was: a refused
10,000-character id (or instant, or type) must not come back whole in an answer, nor
must a megabyte event reach a model whole (`tools.bounds`)."""

# Enough to recognise a value by its start; a refusal says how long the whole one is.
ECHO_CHARS = 100


def marker(length: int) -> str:
    """What ends a cut text: the whole text's length, so a reader knows what is missing."""
    return f"…[truncated, {length:,} characters]"


def cut(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and the marker."""
    return text if len(text) <= limit else text[:limit] + marker(len(text))


def echoed(value: str, limit: int = ECHO_CHARS) -> str:
    """`value` as a refusal quotes it: whole when short, else cut with its mark."""
    return cut(value, limit)
