"""A streaming OpenAI-compatible test server with exactly known timing.

Why it exists: to check that the load generator measures what a server really does, we need
a server whose TTFT and inter-token gaps are known in advance. This one streams SSE chunks
on an absolute schedule (first token at admit + ttft, token i at admit + ttft + i * gap),
so scheduling errors do not accumulate, and stamps each chunk with the server's own wall
clock send time (`servops_sent_at`). `GET /fake/truth` lists, per streamed request, when the
handler received it and when each content chunk was written: on a busy shared machine the
server itself can run late, and a test must compare the client with what the server did.

It is a legitimate test server, not a mock of the engine: it speaks the HTTP/SSE protocol
(`/v1/models`, `/v1/chat/completions`, `/v1/completions`, `/metrics`, `/health`) and can
misbehave on purpose (non-streaming replies, malformed SSE, HTTP 500, dropping the stream).
A path prefix overrides the behaviour per request (`/mode=malformed,ttft=0.2/v1/...`), so one
process can serve every variant a test module needs.

Run it: `python -m tests.helpers.fake_openai_server --port 0 --ttft 0.05 --gap 0.01`; it
prints `READY <port>` on stdout once it listens. `FakeServer` below starts it as a
subprocess for tests and always stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

MODES = ("stream", "non_streaming", "malformed", "error_500", "drop_mid_stream", "error_event")


@dataclass
class ServerBehaviour:
    """What the server does; every field is a command-line flag."""

    ttft_s: float = 0.05
    gap_s: float = 0.01
    tokens: int = 16
    honor_max_tokens: bool = False
    max_concurrency: int = 0  # 0 = unlimited; otherwise extra requests queue
    mode: str = "stream"
    metrics: bool = True
    old_metric_names: bool = False
    model: str = "fake-model"
    api_key: str = ""
    running: int = 0
    waiting: int = 0
    preemptions: int = 0
    served: int = 0
    truth: deque = field(default_factory=lambda: deque(maxlen=20_000), repr=False)
    semaphore: asyncio.Semaphore | None = field(default=None, repr=False)


def build_app(behaviour: ServerBehaviour) -> web.Application:
    """The aiohttp application; the routes are a `_FakeServer`'s methods, sharing `behaviour` for state."""
    server = _FakeServer(behaviour)

    @web.middleware  # aiohttp marks a function (a bound method takes no attribute)
    async def require_key(request: web.Request, handler):
        return await server.require_key(request, handler)

    app = web.Application(middlewares=[require_key])
    for prefix in ("", "/{cfg:[^/]+}"):
        app.router.add_get(prefix + "/v1/models", server.models)
        app.router.add_get(prefix + "/health", server.health)
        app.router.add_get(prefix + "/metrics", server.metrics)
        app.router.add_get(prefix + "/fake/truth", server.truth)
        app.router.add_post(prefix + "/v1/chat/completions", server.generate)
        app.router.add_post(prefix + "/v1/completions", server.generate)
    return app


class _FakeServer:
    """The routes of the fake OpenAI server; `behaviour` holds the timing, the modes and the counters."""

    def __init__(self, behaviour: ServerBehaviour) -> None:
        self.behaviour = behaviour

    async def require_key(self, request: web.Request, handler):
        if (
            self.behaviour.api_key
            and "/v1/" in request.path
            and request.headers.get("Authorization") != f"Bearer {self.behaviour.api_key}"
        ):
            return web.json_response({"error": {"message": "Unauthorized", "type": "AuthenticationError"}}, status=401)
        return await handler(request)

    async def models(self, _: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [{"id": self.behaviour.model, "object": "model", "owned_by": "fake"}]}
        )

    async def health(self, _: web.Request) -> web.Response:
        return web.Response(status=200)

    async def metrics(self, _: web.Request) -> web.Response:
        if not self.behaviour.metrics:
            return web.Response(status=404, text="not found")
        kv_name = "vllm:gpu_cache_usage_perc" if self.behaviour.old_metric_names else "vllm:kv_cache_usage_perc"
        cap = self.behaviour.max_concurrency or 64
        labels = f'{{engine="0",model_name="{self.behaviour.model}"}}'
        lines = [
            "# TYPE vllm:num_requests_running gauge",
            f"vllm:num_requests_running{labels} {float(self.behaviour.running)}",
            "# TYPE vllm:num_requests_waiting gauge",
            f"vllm:num_requests_waiting{labels} {float(self.behaviour.waiting)}",
            f"# TYPE {kv_name} gauge",
            f"{kv_name}{labels} {min(1.0, self.behaviour.running / cap)}",
            "# TYPE vllm:num_preemptions_total counter",
            f"vllm:num_preemptions_total{labels} {float(self.behaviour.preemptions)}",
        ]
        return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")

    async def truth(self, _: web.Request) -> web.Response:
        return web.json_response(list(self.behaviour.truth))

    async def generate(self, request: web.Request) -> web.StreamResponse:
        received_wall = time.time()
        body = await request.json()
        chat = request.path.endswith("/chat/completions")
        timing = _overrides(self.behaviour, request.match_info.get("cfg", ""))
        tokens = timing.tokens
        if timing.honor_max_tokens and isinstance(body.get("max_tokens"), int):
            tokens = max(1, body["max_tokens"])
        if timing.mode == "error_500":
            return web.json_response({"error": {"message": "boom", "type": "InternalServerError"}}, status=500)
        if timing.mode == "non_streaming" or not body.get("stream"):
            await asyncio.sleep(timing.ttft_s + timing.gap_s * (tokens - 1))
            return web.json_response(_full_reply(chat, tokens, self.behaviour.model))
        self.behaviour.waiting += 1
        try:
            if self.behaviour.semaphore is not None:
                await self.behaviour.semaphore.acquire()
        finally:
            self.behaviour.waiting -= 1
        self.behaviour.running += 1
        try:
            return await self._stream(request, body, chat, tokens, timing, received_wall)
        finally:
            self.behaviour.running -= 1
            self.behaviour.served += 1
            if self.behaviour.semaphore is not None:
                self.behaviour.semaphore.release()

    async def _stream(
        self, request: web.Request, body: dict, chat: bool, tokens: int, timing: ServerBehaviour, received_wall: float
    ) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        admitted = loop.time()
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        usage_opts = body.get("stream_options") or {}
        continuous = bool(usage_opts.get("continuous_usage_stats"))
        sent_walls: list[float] = []
        self.behaviour.truth.append({"received": received_wall, "sent": sent_walls})
        for index in range(tokens):
            target = admitted + timing.ttft_s + index * timing.gap_s
            delay = target - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if timing.mode == "drop_mid_stream" and index == tokens // 2:
                request.transport.close()  # type: ignore[union-attr]
                return resp
            if timing.mode == "malformed" and index == 1:
                await resp.write(b"data: {not json\n\n")
                continue
            if timing.mode == "error_event" and index == 1:
                await resp.write(b'data: {"error": {"message": "engine died", "type": "InternalServerError"}}\n\n')
                break
            chunk = _chunk(chat, index, tokens, self.behaviour.model)
            if continuous:
                chunk["usage"] = {"prompt_tokens": 8, "completion_tokens": index + 1, "total_tokens": 9 + index}
            await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            sent_walls.append(chunk["servops_sent_at"])
        if usage_opts.get("include_usage"):
            final = {
                "id": "x",
                "object": "chunk",
                "choices": [],
                "usage": {"prompt_tokens": 8, "completion_tokens": tokens, "total_tokens": 8 + tokens},
            }
            await resp.write(b"data: " + json.dumps(final).encode() + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp


def _overrides(base: ServerBehaviour, cfg: str) -> ServerBehaviour:
    """Per-URL variants, so one server process serves many behaviours.

    `http://host:port/mode=malformed,ttft=0.2,gap=0.01,tokens=8/v1/chat/completions`; the
    concurrency cap and the counters stay those of the server.
    """
    if not cfg:
        return base
    fields = dict(item.split("=", 1) for item in cfg.split(",") if "=" in item)
    return ServerBehaviour(
        ttft_s=float(fields.get("ttft", base.ttft_s)),
        gap_s=float(fields.get("gap", base.gap_s)),
        tokens=int(fields.get("tokens", base.tokens)),
        mode=fields.get("mode", base.mode),
        honor_max_tokens=fields.get("honor_max_tokens", str(base.honor_max_tokens)) in ("1", "True", "true"),
    )


def _chunk(chat: bool, index: int, tokens: int, model: str) -> dict:
    text = f" tok{index}"
    finish = "length" if index == tokens - 1 else None
    choice: dict = {"index": 0, "finish_reason": finish}
    if chat:
        choice["delta"] = {"role": "assistant", "content": text} if index == 0 else {"content": text}
    else:
        choice["text"] = text
    return {
        "id": "fake-1",
        "object": "chat.completion.chunk" if chat else "text_completion",
        "model": model,
        "choices": [choice],
        "servops_sent_at": time.time(),
    }


def _full_reply(chat: bool, tokens: int, model: str) -> dict:
    text = "".join(f" tok{i}" for i in range(tokens))
    choice = {"index": 0, "finish_reason": "length"}
    choice.update({"message": {"role": "assistant", "content": text}} if chat else {"text": text})
    return {
        "id": "fake-1",
        "object": "chat.completion" if chat else "text_completion",
        "model": model,
        "choices": [choice],
        "usage": {"prompt_tokens": 8, "completion_tokens": tokens},
    }


async def _serve(behaviour: ServerBehaviour, host: str, port: int) -> None:
    if behaviour.max_concurrency > 0:
        behaviour.semaphore = asyncio.Semaphore(behaviour.max_concurrency)
    runner = web.AppRunner(build_app(behaviour), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=1024)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"READY {bound}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="bind address (loopback only for tests)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one")
    parser.add_argument("--ttft", type=float, default=0.05, help="seconds from admission to the first token")
    parser.add_argument("--gap", type=float, default=0.01, help="seconds between tokens")
    parser.add_argument("--tokens", type=int, default=16, help="tokens per reply")
    parser.add_argument("--honor-max-tokens", action="store_true", help="reply with the request's max_tokens")
    parser.add_argument("--max-concurrency", type=int, default=0, help="streams served at once; 0 = no cap")
    parser.add_argument("--mode", choices=MODES, default="stream", help="normal or deliberately broken replies")
    parser.add_argument("--no-metrics", action="store_true", help="answer /metrics with 404")
    parser.add_argument("--old-metric-names", action="store_true", help="use vllm:gpu_cache_usage_perc")
    parser.add_argument("--api-key", default="", help="require this bearer token on /v1/* (as vllm --api-key)")
    args = parser.parse_args(argv)
    behaviour = ServerBehaviour(
        ttft_s=args.ttft,
        gap_s=args.gap,
        tokens=args.tokens,
        honor_max_tokens=args.honor_max_tokens,
        max_concurrency=args.max_concurrency,
        mode=args.mode,
        metrics=not args.no_metrics,
        old_metric_names=args.old_metric_names,
        api_key=args.api_key,
    )
    asyncio.run(_serve(behaviour, args.host, args.port))


class FakeServer:
    """Starts the server as a subprocess on a free loopback port; a context manager that always stops it."""

    def __init__(self, *flags: str, startup_timeout_s: float = 30.0) -> None:
        self.flags = list(flags)
        self.startup_timeout_s = startup_timeout_s
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeServer:
        root = Path(__file__).resolve().parents[2]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.fake_openai_server", "--port", "0", *self.flags],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        deadline = time.monotonic() + self.startup_timeout_s
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if line.startswith("READY"):
                self.port = int(line.split()[1])
                return self
            if not line and self.proc.poll() is not None:
                break
        self.__exit__(None, None, None)
        raise RuntimeError(f"fake OpenAI server did not start within {self.startup_timeout_s} s")

    def __exit__(self, *_: object) -> None:
        if self.proc is None:
            return
        try:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        finally:
            if self.proc.stdout:
                self.proc.stdout.close()


if __name__ == "__main__":
    main()
