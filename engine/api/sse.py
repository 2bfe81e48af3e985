"""Server-sent events exactly as vLLM frames them: `data: <json>\\n\\n`, ending with `data: [DONE]`.

Why its own module: both generation endpoints stream, and a client that disconnects must
never turn into a logged traceback; the writes that may hit a closed socket live here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from engine.api import errors as api_errors
from engine.core.async_engine import EngineDeadError

SSE_DONE = b"data: [DONE]\n\n"


def sse_event(data: str) -> bytes:
    """One server-sent event: `data: <json>` and a blank line."""
    return f"data: {data}\n\n".encode()


async def start_sse(http_request: web.Request) -> web.StreamResponse:
    """A 200 text/event-stream response, headers sent."""
    response = web.StreamResponse(
        status=200, headers={"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}
    )
    await response.prepare(http_request)
    return response


async def write_quietly(response: web.StreamResponse, data: bytes, eof: bool = False) -> None:
    """Write, ignoring a client that has already gone (nothing is left to tell it)."""
    try:
        await response.write(data)
        if eof:
            await response.write_eof()
    except ConnectionResetError:
        pass


async def send_stream(http_request: web.Request, events: AsyncIterator[bytes]) -> web.StreamResponse:
    """Stream `events`, then end as vLLM does: an error event if the engine died, then [DONE].

    A client that went away ends the stream silently; leaving the request's generator is what
    aborts it in the engine.
    """
    response = await start_sse(http_request)
    try:
        async for event in events:
            await response.write(event)
    except EngineDeadError:
        await write_quietly(response, sse_event(api_errors.compact_json(api_errors.engine_dead().body())))
    except ConnectionResetError:
        return response
    await write_quietly(response, SSE_DONE, eof=True)
    return response
