"""The aiohttp application: vLLM 0.33's routes, error middleware and uvicorn-style access lines.

With `--api-key` (or VLLM_API_KEY), paths under /v1 answer 401 `{"error": "Unauthorized"}`
without `Authorization: Bearer <key>`, as vLLM's AuthenticationMiddleware does.

Routes: POST /v1/completions, POST /v1/chat/completions, GET /v1/models, GET /health,
GET|POST /ping, GET /version, GET /load, GET /metrics. Every error leaves as vLLM's nested
JSON (`{"error": {message, type, param, code}}`); a handler bug is a 500 with vLLM's text
and a logged traceback, never an HTML page.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from engine.api import errors as api_errors
from engine.api.chat import create_chat_completion
from engine.api.completions import create_completion
from engine.api.errors import ApiError, compact_json
from engine.api.protocol import ModelCard, ModelList
from engine.api.serving import OpenAIServing
from engine.observability.logger import init_logger
from engine.observability.metrics import METRICS_CONTENT_TYPE, EngineMetrics

logger = init_logger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(slots=True)
class ServerState:
    """What the routes read; `shutting_down` turns new generation requests into 503s."""

    serving: OpenAIServing
    metrics: EngineMetrics
    version: str
    shutting_down: bool = False
    api_key_digests: tuple[bytes, ...] = ()  # SHA-256 of each --api-key; empty: no authentication


def api_key_digests(keys: list[str] | None) -> tuple[bytes, ...]:
    """What the server keeps of its keys: digests, so the keys themselves are compared in constant time."""
    return tuple(hashlib.sha256(key.encode("utf-8")).digest() for key in keys or () if key)


STATE_KEY: web.AppKey[ServerState] = web.AppKey("servops_state", ServerState)
GENERATION_PATHS = frozenset({"/v1/completions", "/v1/chat/completions"})
GUARDED_PREFIXES = ("/v1", "/v2", "/inference", "/cohere")  # vLLM's AuthenticationMiddleware.GUARDED_PREFIX


def build_app(state: ServerState) -> web.Application:
    app = web.Application(middlewares=[_errors_middleware], client_max_size=64 * 1024 * 1024)
    app[STATE_KEY] = state
    app.router.add_post("/v1/completions", _completions)
    app.router.add_post("/v1/chat/completions", _chat)
    app.router.add_get("/v1/models", _models)
    app.router.add_get("/health", _health)
    app.router.add_get("/ping", _health)
    app.router.add_post("/ping", _health)
    app.router.add_get("/version", _version)
    app.router.add_get("/load", _load)
    app.router.add_get("/metrics", _metrics)
    return app


def route_table(app: web.Application) -> list[tuple[str, str]]:
    """(path, methods) pairs for vLLM's `Route: %s, Methods: %s` startup lines."""
    methods: dict[str, set[str]] = {}
    for route in app.router.routes():
        if route.method == "HEAD":  # aiohttp adds HEAD to every GET; vLLM's list shows the declared ones
            continue
        path = route.resource.canonical if route.resource is not None else ""
        methods.setdefault(path, set()).add(route.method)
    return [(path, ", ".join(sorted(found))) for path, found in methods.items()]


@web.middleware
async def _errors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    if state.api_key_digests and not _authorized(request, state.api_key_digests):
        return api_errors.Unauthorized().response()
    if state.shutting_down and request.path in GENERATION_PATHS:
        return api_errors.shutting_down().response()
    try:
        return await handler(request)
    except ApiError as exc:
        return exc.response()
    except api_errors.ClientDisconnected:  # hung up mid-body: uvicorn (vLLM) logs nothing either
        return web.Response(status=499)
    except web.HTTPException as exc:  # 404/405 from the router, in vLLM's JSON shape
        err_type = "NotFoundError" if exc.status == 404 else "BadRequestError"
        return ApiError(exc.reason, status=exc.status, err_type=err_type).response()
    except ConnectionResetError:  # the client went away mid-response; nothing to answer
        raise
    except Exception:
        logger.exception("Error in handling request %s %s", request.method, request.path)
        return api_errors.ApiError(
            api_errors.ENGINE_DEAD_MESSAGE, status=500, err_type="InternalServerError"
        ).response()


def _authorized(request: web.Request, digests: tuple[bytes, ...]) -> bool:
    """vLLM's rule: OPTIONS and paths outside /v1, /v2, /inference, /cohere (e.g. /health,
    /metrics) pass; the rest need `Authorization: Bearer <one of the keys>`."""
    if request.method == "OPTIONS" or not request.path.startswith(GUARDED_PREFIXES):
        return True
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    given = hashlib.sha256(token.encode("utf-8")).digest()
    matched = False
    for digest in digests:  # no early exit: the time taken does not say which key nearly matched
        matched |= secrets.compare_digest(given, digest)
    return matched


async def _completions(request: web.Request) -> web.StreamResponse:
    return await create_completion(request.app[STATE_KEY].serving, request)


async def _chat(request: web.Request) -> web.StreamResponse:
    return await create_chat_completion(request.app[STATE_KEY].serving, request)


async def _models(request: web.Request) -> web.Response:
    options = request.app[STATE_KEY].serving.options
    card = ModelCard(id=options.served_model_name, root=options.model_path, max_model_len=options.max_model_len)
    return web.Response(text=ModelList(data=[card]).model_dump_json(), content_type="application/json")


async def _health(request: web.Request) -> web.Response:
    """200 with an empty body while the engine loop lives; 503 once it died (vLLM 0.11+)."""
    alive = request.app[STATE_KEY].serving.async_engine.is_alive
    return web.Response(status=200 if alive else 503)


async def _version(request: web.Request) -> web.Response:
    return web.json_response({"version": request.app[STATE_KEY].version}, dumps=compact_json)


async def _load(request: web.Request) -> web.Response:
    return web.json_response({"server_load": request.app[STATE_KEY].serving.in_flight}, dumps=compact_json)


async def _metrics(request: web.Request) -> web.Response:
    body = request.app[STATE_KEY].metrics.exposition()
    response = web.Response(body=body)
    response.headers["Content-Type"] = METRICS_CONTENT_TYPE
    return response


class UvicornStyleAccessLogger(AbstractAccessLogger):
    """`INFO:     127.0.0.1:48927 - "POST /v1/chat/completions HTTP/1.1" 200 OK`, as vLLM's uvicorn prints."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        peer = request.remote or "-"
        transport = request.transport
        port = ""
        if transport is not None:
            peername = transport.get_extra_info("peername")
            if isinstance(peername, tuple) and len(peername) >= 2:
                port = f":{peername[1]}"
        version = f"{request.version.major}.{request.version.minor}"
        access_line(
            f'{peer}{port} - "{request.method} {request.path_qs} HTTP/{version}" {response.status} {response.reason}'
        )


_access = logging.getLogger("uvicorn.access")


class _UvicornFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname + ':':<9} {record.getMessage()}"


def access_line(message: str, level: int = logging.INFO) -> None:
    """A line in uvicorn's format (`INFO:     …`), without vLLM's prefix, on stdout."""
    if not _access.handlers:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(_UvicornFormatter())
        _access.addHandler(handler)
        _access.setLevel(logging.INFO)
        _access.propagate = False
    _access.log(level, message)
