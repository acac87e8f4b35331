"""Request bodies read with a bound, so one request cannot make the sidecar hold
an arbitrary amount of memory."""

from starlette.requests import Request


async def read_limited(request: Request, limit: int) -> bytes | None:
    """The body, or None once it passes `limit` (read no further than that)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
