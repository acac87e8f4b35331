"""Request bodies, bounded three ways: the bytes of one body, the time to receive
it, and the bytes of all bodies held at once (`InflightBytes`), so concurrent large
bodies cannot take the sidecar's memory between them.

A body's bytes stay counted until its request is answered: the events parsed from it
live as long, and take a few times its size.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse

from session_recall.core import strict_json
from session_recall.error_policy import RETRY_AFTER_S
from session_recall.http.errors import json_error
from session_recall.http.memory import give_back

MIB = 1024 * 1024
# Giving memory back costs a few milliseconds; after small requests there is little.
GIVE_BACK_AFTER_BYTES = 16 * MIB


class BodyRefused(Exception):
    """The body was not taken: too large, too slow, or no room for it now."""

    def __init__(self, status: int, message: str, hint: str | None, *, retry: bool = False) -> None:
        super().__init__(message)
        self.status, self.message, self.hint, self.retry = status, message, hint, retry

    def response(self) -> JSONResponse:
        # A body left unread makes the connection unusable: say so, and close it.
        headers = {"Connection": "close"}
        if self.retry:
            headers["Retry-After"] = str(RETRY_AFTER_S)
        return json_error(self.status, self.message, self.hint, headers=headers)


class InflightBytes:
    """Bytes of request bodies held at once, across every request. When the last body
    of a burst is released, the memory it took is given back to the system."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self._freed = asyncio.Condition()
        self._since_given_back = 0

    async def reserve(self, size: int, *, wait: float) -> bool:
        """Hold `size` more bytes, waiting up to `wait` seconds for room; False when
        none was made in time (the caller holds nothing more then)."""
        async with self._freed:
            try:
                async with asyncio.timeout(wait):
                    await self._freed.wait_for(lambda: self.held + size <= self.limit)
            except TimeoutError:
                return False
            self.held += size
            return True

    async def release(self, size: int) -> None:
        async with self._freed:
            self.held -= size
            self._since_given_back += size
            self._freed.notify_all()
            if self.held == 0 and self._since_given_back >= GIVE_BACK_AFTER_BYTES:
                self._since_given_back = 0
                give_back()


@contextlib.asynccontextmanager
async def read_body(
    request: Request,
    *,
    limit: int,
    budget: InflightBytes,
    timeout: float,
    room_wait: float,
    smaller: str,
) -> AsyncIterator[bytes]:
    """The whole body, counted in `budget` until the block ends. Raises `BodyRefused`:
    415 for a compressed body (`Content-Encoding`), 413 past `limit`, 408 when it takes
    longer than `timeout` seconds to arrive once there is room for it, 503 when
    `budget` has no room for it within `room_wait` seconds (the body is left
    unread meanwhile, so the client is slowed down rather than buffered). `smaller`
    tells the caller how to send less."""
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding != "identity":
        # Read as it is, a compressed body would be parsed as text; decoded, a small
        # one could expand past every limit.
        raise BodyRefused(
            415,
            f"Content-Encoding {encoding!r} is not accepted.",
            "Send the body uncompressed (no Content-Encoding header).",
        )
    held = 0

    async def hold(size: int) -> None:
        nonlocal held
        if not await budget.reserve(size, wait=room_wait):
            raise BodyRefused(
                503,
                f"Request bodies of {budget.held / MIB:.1f} MiB are being processed, and this "
                f"one would pass the limit of {budget.limit / MIB:.1f} MiB held at once.",
                "Send the request again after Retry-After.",
                retry=True,
            )
        held += size

    try:
        declared = _content_length(request)
        if declared is not None and declared > limit:
            raise _too_large(limit, smaller)
        if declared:
            # Before the body's clock starts: waiting for room is the server's doing, bounded
            # by `room_wait`, not a slow client (a loaded server would otherwise answer 408).
            await hold(declared)
        try:
            async with asyncio.timeout(timeout):
                chunks, size = [], 0
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > limit:
                        raise _too_large(limit, smaller)
                    if size > held:
                        await hold(size - held)
                    chunks.append(chunk)
        except TimeoutError:
            raise BodyRefused(
                408,
                f"The request body did not arrive within {timeout:g} s.",
                "Send it again, faster, or in smaller requests.",
            ) from None
        body = b"".join(chunks)
        del chunks
        yield body
    finally:
        if held:
            await budget.release(held)


def content_type(request: Request) -> str:
    """The request's media type, lowercase, without its parameters."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def read_json(
    request: Request,
    *,
    what: str,
    limit: int,
    budget: InflightBytes,
    timeout: float,
    room_wait: float,
    smaller: str,
) -> object:
    """The body as JSON (`strict_json`), read within `read_body`'s bounds, which it
    holds only while it parses. Raises `BodyRefused`, as `read_body` does, and also 415
    for another content type than application/json (`what`: what the caller should
    send, "the tool arguments"), and 400 for a body that is not JSON."""
    kind = content_type(request)
    if kind != "application/json":
        raise BodyRefused(
            415, f"Unsupported content type {kind!r}.", f"Send {what} as application/json."
        )
    async with read_body(
        request, limit=limit, budget=budget, timeout=timeout, room_wait=room_wait,
        smaller=smaller,
    ) as body:  # fmt: skip
        try:
            return strict_json.loads(body or b"null")
        except strict_json.InvalidJson as err:
            raise BodyRefused(400, f"The body is not valid JSON: {err}.", None) from None


def _content_length(request: Request) -> int | None:
    try:
        return max(0, int(request.headers["content-length"]))
    except (KeyError, ValueError):
        return None


def _too_large(limit: int, smaller: str) -> BodyRefused:
    return BodyRefused(413, f"The body is over the limit of {limit} bytes.", smaller)
