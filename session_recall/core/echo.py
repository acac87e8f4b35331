"""Values quoted back in refusals, cut to a bound: a refused 10,000-character id (or
instant, or type) must not come back whole in an answer, nor in what is built on it."""

# Enough to recognise a value by its start; a refusal says how long the whole one is.
ECHO_CHARS = 100


def echoed(value: str, limit: int = ECHO_CHARS) -> str:
    """`value` as a refusal quotes it: whole when short, else its first `limit`
    characters and a mark saying how long it was."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]}…[truncated, {len(value):,} characters]"
