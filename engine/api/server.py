"""`python -m engine serve`: start the engine, serve the OpenAI API, stop cleanly on SIGTERM.

Startup speaks vLLM's lines (APIServer side): `vLLM server version …, serving model …`,
`non-default args: {…}`, the engine's own sizing lines, `Starting vLLM server on http://…`,
`Available routes are:` with one `Route: …, Methods: …` line each, then uvicorn's
`Application startup complete.`.

SIGTERM/SIGINT: stop listening, answer new generation requests with 503, let in-flight
requests finish for up to `--shutdown-timeout` seconds, then abort the rest (their blocks are
freed) so each stream still ends with `finish_reason: "abort"` and `data: [DONE]`, stop the
engine thread, exit 0.

Unlike vLLM (whose watchdog exits when the engine dies), the server stays up after the engine
loop died and answers /health with 503, so orchestrators and the triage agent can see it.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import signal
import socket
from importlib import metadata
from typing import Any

from aiohttp import web

from engine.api import cli_args
from engine.api.routes import (
    STATE_KEY,
    ServerState,
    UvicornStyleAccessLogger,
    access_line,
    api_key_digests,
    build_app,
    route_table,
)
from engine.api.serving import OpenAIServing, ServingOptions
from engine.api.setup_thread import run_on_setup_thread
from engine.api.threads import engine_threads
from engine.core.async_engine import AsyncEngine
from engine.core.errors import EngineStartupError
from engine.core.stats import scheduler_fields
from engine.observability.logger import init_logger, set_process_name
from engine.observability.metrics import EngineMetrics
from engine.observability.stats_logger import LoggingStatLogger, stats_interval_s

logger = init_logger(__name__)

VLLM_COMPAT_VERSION = "0.33.0"  # the vLLM release whose formats this server follows
FINISH_GRACE_S = 5.0  # after aborting at shutdown: time for handlers to send the last chunk and [DONE]
DRAIN_POLL_S = 0.05


def server_version() -> str:
    """`0.33.0+servops.<ver>`: vLLM-comparable, and honest about what is answering."""
    try:
        own = metadata.version("servops")
    except metadata.PackageNotFoundError:
        own = "0"
    return f"{VLLM_COMPAT_VERSION}+servops.{own}"


def serve(args: argparse.Namespace) -> int:
    """Run the server until SIGTERM/SIGINT; returns the process exit code."""
    set_process_name("APIServer")
    model_label = args.model or "SmolLM2-135M-Instruct (the embedded default)"
    logger.info("vLLM server version %s, serving model %s", server_version(), model_label)
    logger.info("non-default args: %s", cli_args.non_default_args(args))
    sock = _bind(args.host, args.port)  # before the slow model load: a busy port fails at once
    try:
        engine, config = run_on_setup_thread(lambda: _start_engine(args))
    except BaseException:
        sock.close()
        raise
    served_name = args.served_model_name or engine.served_model_name
    max_model_len = int(engine.max_model_len)
    metrics = EngineMetrics(model_name=served_name, max_model_len=max_model_len)
    metrics.set_cache_config_info(_cache_config_labels(engine, config))
    device_type = config.torch_device().type if hasattr(config, "torch_device") else "cpu"
    stat_logger = None if args.disable_log_stats else LoggingStatLogger(device_type=device_type)
    threads_for = None
    if device_type == "cpu":
        policy = run_on_setup_thread(lambda: engine_threads(args.cpu_threads, engine.runner.weight_pass_s))
        logger.info("CPU threads for the engine: %s.", policy.describe())
        threads_for = policy.threads_for
    async_engine = AsyncEngine(engine, metrics=metrics, stat_logger=stat_logger, threads_for=threads_for)
    options = ServingOptions(
        served_model_name=served_name,
        model_path=str(engine.model_dir),
        max_model_len=max_model_len,
        log_requests=not args.disable_log_requests,
        max_num_queued_reqs=args.max_num_queued_reqs,
        force_include_usage=args.enable_force_include_usage,
        vocab_size=_vocab_size(engine),
    )
    state = ServerState(
        serving=OpenAIServing(async_engine, engine.tokenizer, options, metrics),
        metrics=metrics,
        version=server_version(),
        api_key_digests=api_key_digests(cli_args.api_keys(args)),
    )
    async_engine.start()
    try:
        asyncio.run(_serve_http(state, args, stat_logger, sock))
    finally:
        async_engine.stop()
    return 0


def _start_engine(args: argparse.Namespace) -> tuple[Any, Any]:
    from engine.core.config import EngineConfig  # heavy imports only once the flags are known good
    from engine.core.llm_engine import LLMEngine

    fields = {field.name for field in dataclasses.fields(EngineConfig)}
    kwargs = {key: value for key, value in cli_args.engine_config_kwargs(args).items() if key in fields}
    config = EngineConfig(**kwargs)
    set_process_name("EngineCore")
    try:
        engine = LLMEngine(config)
    except EngineStartupError:
        logger.error("EngineCore failed to start.")
        set_process_name("APIServer")
        logger.error("Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore': 1}")
        raise
    finally:
        set_process_name("APIServer")
    return engine, getattr(engine, "config", config)


def _cache_config_labels(engine: Any, config: Any) -> dict[str, object]:
    stats = scheduler_fields(engine.scheduler_stats())
    num_blocks = stats["num_gpu_blocks"] or _call(engine, "num_total_blocks")
    return {
        "block_size": getattr(config, "block_size", None),
        "cache_dtype": getattr(config, "kv_cache_dtype", "auto"),
        "calculate_kv_scales": False,
        "cpu_offload_gb": 0,
        "enable_prefix_caching": getattr(config, "enable_prefix_caching", None),
        "gpu_memory_utilization": getattr(config, "gpu_memory_utilization", None),
        "is_attention_free": False,
        "kv_cache_memory_bytes": None,
        "num_cpu_blocks": None,
        "num_gpu_blocks": num_blocks,
        "num_gpu_blocks_override": getattr(config, "num_gpu_blocks_override", None),
        "sliding_window": None,
        "swap_space": 0,
    }


def _vocab_size(engine: Any) -> int | None:
    """The model's vocab_size (vLLM's get_vocab_size), which bounds logit_bias token ids."""
    model = getattr(getattr(engine, "runner", None), "model", None)
    return getattr(getattr(model, "config", None), "vocab_size", None)


def _call(obj: Any, name: str) -> Any:
    method = getattr(obj, name, None)
    return method() if callable(method) else None


async def _serve_http(
    state: ServerState, args: argparse.Namespace, stat_logger: LoggingStatLogger | None, sock: socket.socket
) -> None:
    app = build_app(state)
    runner = web.AppRunner(
        app, handle_signals=False, access_log_class=UvicornStyleAccessLogger, shutdown_timeout=FINISH_GRACE_S
    )
    await runner.setup()
    site = web.SockSite(runner, sock)
    await site.start()
    host, port = sock.getsockname()[:2]
    logger.info("Starting vLLM server on http://%s:%d", _display_host(host), port)
    logger.info("Available routes are:")
    for path, methods in route_table(app):
        logger.info("Route: %s, Methods: %s", path, methods)
    access_line(f"Started server process [{os.getpid()}]")
    access_line("Waiting for application startup.")
    access_line("Application startup complete.")

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    stats_task = asyncio.create_task(_log_stats_forever(state, stat_logger)) if stat_logger else None
    try:
        await stop.wait()
    finally:
        state.shutting_down = True
        access_line("Shutting down")
        await site.stop()  # no new connections; open ones get 503 for new generation requests
        await _drain(state, args.shutdown_timeout)
        access_line("Waiting for application shutdown.")
        await runner.cleanup()  # every handler has finished by now, or is cancelled after FINISH_GRACE_S
        if stats_task:
            stats_task.cancel()
        access_line("Application shutdown complete.")
        access_line(f"Finished server process [{os.getpid()}]")


async def _drain(state: ServerState, shutdown_timeout_s: float) -> None:
    """Let in-flight requests finish for up to --shutdown-timeout, then abort the rest so that
    each stream still ends with a finish_reason ("abort") and [DONE], not a cut connection."""
    serving = state.serving
    if serving.in_flight:
        logger.info(
            "Waiting up to %.0f s for %d in-flight request(s) to finish.", shutdown_timeout_s, serving.in_flight
        )
    await _wait_idle(serving, shutdown_timeout_s)
    if serving.in_flight:
        logger.info(
            "Aborting %d request(s) still running after --shutdown-timeout %.0f s.",
            serving.in_flight,
            shutdown_timeout_s,
        )
        serving.async_engine.finish_all()
        await _wait_idle(serving, FINISH_GRACE_S)


async def _wait_idle(serving: OpenAIServing, timeout_s: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while serving.in_flight and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(DRAIN_POLL_S)


def _bind(host: str, port: int) -> socket.socket:
    """Bind before announcing, so port 0 resolves to a real port and a busy port is one clear error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PortInUseError(
            f"--host {host} --port {port}: cannot listen there ({exc.strerror}); "
            f"pick another --port or stop what uses it"
        ) from None
    sock.listen(1024)
    sock.setblocking(False)
    return sock


class PortInUseError(OSError):
    user_facing = True


def _display_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


async def _log_stats_forever(state: ServerState, stat_logger: LoggingStatLogger) -> None:
    interval_s = stats_interval_s()
    while True:
        await asyncio.sleep(interval_s)
        stat_logger.log(state.serving.async_engine.snapshot)


__all__ = ["serve", "server_version", "STATE_KEY"]
