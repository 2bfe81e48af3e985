"""The engine loop beside the aiohttp event loop: `LLMEngine.step()` in one worker thread.

Why a thread and a command queue: `LLMEngine` is synchronous and not thread-safe, and a step
can take a long time on a CPU; the event loop must keep answering /health, /metrics and
streams meanwhile. So the HTTP side never touches the engine: it posts commands (add,
abort) that the engine thread applies between steps, and reads results from one asyncio
queue per request, fed with `call_soon_threadsafe`.

The thread also turns each step into metrics (vLLM's semantics: TTFT and inter-token
latency per token, per-request histograms at finish) and feeds the stats logger.

If a step raises, the loop is dead for good, as vLLM's EngineCore is: it logs
`EngineCore encountered a fatal error.` with the traceback, every waiting request gets
`EngineDeadError`, /health answers 503. Test-only fault hook: with
`SERVOPS_TEST_FAULT_FILE=<path>` set, the next step after that file appears raises inside the
step call, so tests exercise exactly that path on a live server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.core.stats import SchedulerStats, iteration_prompt_tokens, scheduler_fields
from engine.observability.logger import init_logger, set_process_name
from engine.observability.metrics import EngineMetrics, FinishedRequestStats
from engine.observability.stats_logger import LoggingStatLogger, StatsSnapshot

logger = init_logger(__name__)

FAULT_ENV = "SERVOPS_TEST_FAULT_FILE"
IDLE_WAIT_S = 0.5  # how long the idle loop sleeps before re-checking (commands wake it at once)


class EngineDeadError(RuntimeError):
    """The engine loop has died; no request can make progress any more."""


class _Aborted:
    """Queue sentinel: the request was aborted before it finished (the stream ends quietly)."""


ABORTED = _Aborted()


@dataclass(slots=True)
class _Tracked:
    """What the loop remembers about one request to compute vLLM's per-request metrics."""

    queue: asyncio.Queue
    loop: asyncio.AbstractEventLoop
    prompt_len: int
    max_tokens: int | None
    arrival_s: float
    first_scheduled_s: float | None = None
    first_token_s: float | None = None
    last_token_s: float | None = None
    num_generation_tokens: int = 0
    num_cached_tokens: int = 0
    num_preemptions: int = 0


@dataclass(slots=True)
class _Command:
    kind: str  # "add" | "abort" | "finish_all"
    request_id: str
    args: tuple[Any, ...] = ()
    done: concurrent.futures.Future | None = None
    tracked: _Tracked | None = field(default=None)


class AsyncEngine:
    """Owns the engine thread; the HTTP handlers talk to it through `generate()` and `abort()`."""

    def __init__(
        self,
        engine: Any,
        metrics: EngineMetrics | None = None,
        stat_logger: LoggingStatLogger | None = None,
        threads_for: Callable[[int], int] | None = None,
    ) -> None:
        self.engine = engine
        # CPU threads for a step given the tokens it computes (engine/api/threads.py); set in
        # the engine thread itself, since OpenMP's thread count belongs to the calling thread
        self.threads_for = threads_for
        self._threads = 0
        self.metrics = metrics
        self.stat_logger = stat_logger
        self._commands: deque[_Command] = deque()
        self._wakeup = threading.Event()
        self._stopping = threading.Event()
        self._tracked: dict[str, _Tracked] = {}
        self._thread: threading.Thread | None = None
        self.dead_error: BaseException | None = None
        self._fault_file = os.environ.get(FAULT_ENV) or None
        self._last_cumulative: dict[str, int] = {"preemptions": 0, "queries": 0, "hits": 0}
        self.snapshot = StatsSnapshot(running=0, waiting=0, kv_cache_usage=0.0)
        engine.on_schedule = self._on_schedule  # gauges follow the batch while it runs

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="EngineCoreLoop", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stopping.set()
        self._wakeup.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    @property
    def is_alive(self) -> bool:
        """False once a step raised or the thread ended without being asked to."""
        if self.dead_error is not None:
            return False
        return self._thread is not None and (self._thread.is_alive() or self._stopping.is_set())

    @property
    def num_waiting(self) -> int:
        """Requests queued (scheduler's waiting queue plus adds not yet applied)."""
        pending_adds = sum(1 for command in list(self._commands) if command.kind == "add")
        return self.snapshot.waiting + pending_adds

    # --- requests (event-loop side) ------------------------------------------------------

    async def add_request(
        self, request_id: str, prompt_token_ids: list[int], params: Any, max_tokens: int | None = None
    ) -> RequestStream:
        """Hand the request to the engine thread; raises RequestValidationError or EngineDeadError."""
        if not self.is_alive:
            raise EngineDeadError("EngineCore encountered an issue. See stack trace (above) for the root cause.")
        tracked = _Tracked(
            queue=asyncio.Queue(),
            loop=asyncio.get_running_loop(),
            prompt_len=len(prompt_token_ids),
            max_tokens=max_tokens,
            arrival_s=time.monotonic(),
        )
        done: concurrent.futures.Future = concurrent.futures.Future()
        self._post(_Command("add", request_id, (prompt_token_ids, params, tracked.arrival_s), done, tracked))
        await asyncio.wrap_future(done)
        return RequestStream(self, request_id, tracked.queue)

    def abort(self, request_id: str) -> None:
        if self.is_alive:
            self._post(_Command("abort", request_id))

    def finish_all(self) -> None:
        """Shutdown: abort every running request so that each stream still ends properly,
        with a last output whose finish_reason is "abort" (then the handler sends [DONE])."""
        if self.is_alive:
            self._post(_Command("finish_all", ""))

    def _post(self, command: _Command) -> None:
        self._commands.append(command)
        self._wakeup.set()
        if self.dead_error is not None:  # raced with death: fail it here, the loop is gone
            self._fail_pending_commands()

    # --- the engine thread ---------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                self._apply_commands()
                if not self.engine.has_unfinished_requests():
                    self._wakeup.wait(IDLE_WAIT_S)
                    self._wakeup.clear()
                    continue
                outputs = self._step()
                self._after_step(outputs)
        except BaseException as exc:  # noqa: BLE001 - any step failure kills the loop, as in vLLM
            self._die(exc)

    def _on_schedule(self, scheduler_stats: SchedulerStats) -> None:
        """Right after the step is scheduled, before the model runs: gauges, then threads."""
        self._publish_scheduler_state(scheduler_stats)
        self._set_threads(scheduler_stats.num_scheduled_tokens)

    def _set_threads(self, rows: int) -> None:
        """Size the step's CPU threads to the rows it computes: a prompt chunk is a GEMM that every
        core speeds up, a decode of a few sequences a pass over the weights that may not."""
        if self.threads_for is None:
            return
        threads = self.threads_for(rows)
        if threads != self._threads:
            import torch

            torch.set_num_threads(threads)
            self._threads = threads

    def _step(self) -> list[Any]:
        if self._fault_file is not None and os.path.exists(self._fault_file):
            raise RuntimeError(f"injected engine fault: {self._fault_file} exists ({FAULT_ENV})")
        return self.engine.step()

    def _apply_commands(self) -> None:
        applied = False
        while self._commands:
            command = self._commands.popleft()
            applied = True
            if command.kind == "add":
                self._apply_add(command)
            elif command.kind == "abort":
                self._apply_abort(command.request_id)
            elif command.kind == "finish_all":
                for request_id in list(self._tracked):  # stays tracked: its final output comes next step
                    self.engine.abort_request(request_id)
        if applied:
            self._update_gauges()

    def _apply_add(self, command: _Command) -> None:
        prompt_token_ids, params, arrival_s = command.args
        try:
            self.engine.add_request(command.request_id, prompt_token_ids, params, arrival_time=arrival_s)
        except BaseException as exc:  # noqa: BLE001 - handed back to the HTTP handler
            command.done.set_exception(exc)
            return
        self._tracked[command.request_id] = command.tracked
        command.done.set_result(None)

    def _apply_abort(self, request_id: str) -> None:
        tracked = self._tracked.pop(request_id, None)
        if tracked is None:
            return  # already finished
        self.engine.abort_request(request_id)
        logger.info("Aborted request %s.", request_id)
        self._record_finished(tracked, "abort", time.monotonic())
        _deliver(tracked, ABORTED)

    def _after_step(self, outputs: list[Any]) -> None:
        """Account one engine step's outputs, then hand them to their requests.

        Why in this order (the step's counters, then the finished requests' histograms, then the
        deliveries): a client that has its last token, or a scraper that sees a request finished,
        must find every token of it already counted in vllm:generation_tokens_total. Counting after
        delivery let a scrape between the two read a finished request one token short."""
        now = time.monotonic()
        prompt_tokens = generation_tokens = new_requests = 0
        finished: list[tuple[_Tracked, str]] = []
        deliveries: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Queue, Any]]] = {}
        for output in outputs:
            tracked = self._tracked.get(output.request_id)
            if tracked is None:
                continue  # aborted meanwhile
            new_tokens = len(output.new_token_ids or [])
            generation_tokens += new_tokens
            tracked.num_cached_tokens = int(getattr(output, "num_cached_tokens", 0) or 0)
            request_metrics = getattr(output, "metrics", None)
            if request_metrics is not None:
                tracked.num_preemptions = int(getattr(request_metrics, "num_preemptions", 0) or 0)
                scheduled = getattr(request_metrics, "first_scheduled_time", None)
                if scheduled is not None and tracked.first_scheduled_s is None:
                    tracked.first_scheduled_s = float(scheduled)
            if new_tokens:
                if tracked.first_token_s is None:
                    tracked.first_token_s = now
                    prompt_tokens += tracked.prompt_len
                    new_requests += 1
                    if self.metrics:
                        self.metrics.record_first_token(now - tracked.arrival_s)
                elif self.metrics:
                    itl_s = (now - tracked.last_token_s) / new_tokens
                    for _ in range(new_tokens):
                        self.metrics.record_inter_token(itl_s)
                tracked.last_token_s = now
                tracked.num_generation_tokens += new_tokens
            if output.finished:
                del self._tracked[output.request_id]
                finished.append((tracked, output.finish_reason or "stop"))
            deliveries.setdefault(tracked.loop, []).append((tracked.queue, output))
        self._record_step(prompt_tokens, generation_tokens, new_requests)
        for tracked, reason in finished:
            self._record_finished(tracked, reason, now)
        for loop, items in deliveries.items():
            _deliver_all(loop, items)

    def _record_step(self, prompt_tokens: int, generation_tokens: int, new_requests: int) -> None:
        stats = self._update_gauges()
        preemptions = self._delta("preemptions", stats.get("preemptions", 0))
        queries = self._delta("queries", stats.get("queries", 0))
        hits = self._delta("hits", stats.get("hits", 0))
        computed_prompt = iteration_prompt_tokens(self.engine)
        if self.metrics:
            self.metrics.record_iteration(prompt_tokens, generation_tokens, preemptions, queries, hits)
        if self.stat_logger:
            self.stat_logger.record_step(computed_prompt, generation_tokens, preemptions, new_requests, queries, hits)

    def _update_gauges(self) -> dict[str, Any]:
        return self._publish_scheduler_state(self.engine.scheduler_stats())

    def _publish_scheduler_state(self, scheduler_stats: Any) -> dict[str, Any]:
        stats = scheduler_fields(scheduler_stats)
        self.snapshot = StatsSnapshot(
            running=stats["running"], waiting=stats["waiting"], kv_cache_usage=stats["kv_cache_usage"]
        )
        if self.metrics:
            self.metrics.record_scheduler_state(stats["running"], stats["waiting"], stats["kv_cache_usage"])
        return stats

    def _delta(self, key: str, cumulative: int) -> int:
        delta = max(0, cumulative - self._last_cumulative[key])
        self._last_cumulative[key] = cumulative
        return delta

    def _record_finished(self, tracked: _Tracked, reason: str, now: float) -> None:
        if not self.metrics:
            return
        scheduled = (
            tracked.first_scheduled_s
            if tracked.first_scheduled_s is not None
            else (tracked.first_token_s if tracked.first_token_s is not None else now)
        )
        first_token = tracked.first_token_s if tracked.first_token_s is not None else now
        last_token = tracked.last_token_s if tracked.last_token_s is not None else now
        decode_s = max(0.0, last_token - first_token)
        self.metrics.record_finished(
            FinishedRequestStats(
                finished_reason=reason,
                e2e_latency_s=max(0.0, now - tracked.arrival_s),
                num_prompt_tokens=tracked.prompt_len,
                num_generation_tokens=tracked.num_generation_tokens,
                max_tokens_param=tracked.max_tokens,
                queued_time_s=max(0.0, scheduled - tracked.arrival_s),
                prefill_time_s=max(0.0, first_token - scheduled),
                inference_time_s=max(0.0, last_token - scheduled),
                decode_time_s=decode_s,
                mean_time_per_output_token_s=decode_s / max(1, tracked.num_generation_tokens - 1),
                num_cached_tokens=tracked.num_cached_tokens,
                num_preemptions=tracked.num_preemptions,
            )
        )

    def _die(self, exc: BaseException) -> None:
        self.dead_error = exc
        set_process_name("EngineCore")  # vLLM prints this line from the EngineCore process
        try:
            logger.error("EngineCore encountered a fatal error.", exc_info=exc)
        finally:
            set_process_name("APIServer")
        logger.error("AsyncLLM output_handler failed.")
        dead = EngineDeadError("EngineCore encountered an issue. See stack trace (above) for the root cause.")
        for request_id, tracked in list(self._tracked.items()):
            _deliver(tracked, dead)
            self._tracked.pop(request_id, None)
        self._fail_pending_commands()

    def _fail_pending_commands(self) -> None:
        while self._commands:
            command = self._commands.popleft()
            if command.done is not None and not command.done.done():
                command.done.set_exception(EngineDeadError("EngineCore encountered an issue."))


def _deliver(tracked: _Tracked, item: Any) -> None:
    """Hand `item` to the request's event loop."""
    _deliver_all(tracked.loop, [(tracked.queue, item)])


def _deliver_all(loop: asyncio.AbstractEventLoop, items: list[tuple[asyncio.Queue, Any]]) -> None:
    """Hand a step's outputs to one event loop in a single call: each `call_soon_threadsafe` writes
    the loop's wake-up pipe and takes the GIL from the engine thread, so a step of 16 streams woke
    the loop 16 times while its compute threads ran. A loop already closed (the server has shut
    down) has nobody left to read them, which is not an engine failure."""
    try:
        loop.call_soon_threadsafe(_put_all, items)
    except RuntimeError:
        if not loop.is_closed():
            raise


def _put_all(items: list[tuple[asyncio.Queue, Any]]) -> None:
    for queue, item in items:
        queue.put_nowait(item)


class RequestStream:
    """The outputs of one request, in order; `close()` aborts it unless it finished."""

    def __init__(self, owner: AsyncEngine, request_id: str, queue: asyncio.Queue) -> None:
        self.owner = owner
        self.request_id = request_id
        self._queue = queue
        self.finished = False

    def __aiter__(self) -> RequestStream:
        return self

    async def __anext__(self) -> Any:
        if self.finished:
            raise StopAsyncIteration
        item = await self._queue.get()
        if item is ABORTED:
            self.finished = True
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            self.finished = True
            raise item
        self.finished = bool(item.finished)
        return item

    def close(self) -> None:
        if not self.finished:
            self.finished = True
            self.owner.abort(self.request_id)
