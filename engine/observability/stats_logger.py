"""The periodic stats line, in vLLM 0.33's wording (`LoggingStatLogger` in vLLM's loggers.py).

Why the exact text: the advisor's log collector (and anyone's grep) reads throughput,
Running/Waiting, `Preemptions: N` and KV usage from this line on vLLM; our engine must
produce the same line so triage can be tested end to end on it. The rules are vLLM's:

- every VLLM_LOG_STATS_INTERVAL seconds (env, default 10);
- throughput = tokens in the interval / interval length; prompt throughput counts computed
  (non-cached) prompt tokens, as 0.33 does;
- `Preemptions: N` (preemptions in this interval) only when N > 0;
- `<DEVICE> KV cache usage` ("GPU" on CUDA, the upper-cased device type elsewhere);
- `Prefix cache hit rate` over the most recent 1000 requests, printed only once a
  prefix-cache query has been observed (never with --no-enable-prefix-caching);
- DEBUG instead of INFO when this and the previous interval both had zero throughput.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass

from engine.observability.logger import init_logger

DEFAULT_INTERVAL_S = 10.0
INTERVAL_ENV = "VLLM_LOG_STATS_INTERVAL"

logger = init_logger(__name__)


def stats_interval_s() -> float:
    """VLLM_LOG_STATS_INTERVAL as a positive float, else the default 10 s."""
    raw = os.environ.get(INTERVAL_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if value > 0 else DEFAULT_INTERVAL_S


def device_label(device_type: str) -> str:
    """'GPU' on CUDA, else the device type upper-cased (vLLM 0.30+: `%s KV cache usage`)."""
    return "GPU" if device_type in ("cuda", "gpu") else device_type.upper()


class CachingMetrics:
    """Prefix-cache hit rate over the most recent `max_recent_requests` requests (vLLM's window)."""

    def __init__(self, max_recent_requests: int = 1000) -> None:
        self.max_recent_requests = max_recent_requests
        self._window: deque[tuple[int, int, int]] = deque()  # (requests, queries, hits)
        self._requests = self._queries = self._hits = 0

    def observe(self, num_requests: int, queries: int, hits: int) -> None:
        if queries <= 0:  # nothing looked up (prefix caching off, or decode-only step)
            return
        self._window.append((num_requests, queries, hits))
        self._requests += num_requests
        self._queries += queries
        self._hits += hits
        while len(self._window) > 1 and self._requests - self._window[0][0] >= self.max_recent_requests:
            old_requests, old_queries, old_hits = self._window.popleft()
            self._requests -= old_requests
            self._queries -= old_queries
            self._hits -= old_hits

    @property
    def empty(self) -> bool:
        return self._requests == 0 and self._queries == 0

    @property
    def hit_rate(self) -> float:
        return self._hits / self._queries if self._queries else 0.0


@dataclass(frozen=True, slots=True)
class StatsSnapshot:
    """Gauges at logging time."""

    running: int
    waiting: int
    kv_cache_usage: float  # 0-1


class LoggingStatLogger:
    """Accumulates per-step counts (engine thread) and formats the line (event loop)."""

    def __init__(self, device_type: str = "cpu", engine_index: int = 0, clock=time.monotonic) -> None:
        self.device = device_label(device_type)
        self.engine_index = engine_index
        self._clock = clock
        self._lock = threading.Lock()
        self._prompt_tokens = 0
        self._generation_tokens = 0
        self._preemptions = 0
        self._caching = CachingMetrics()
        self._last_log_time = clock()
        self._last_prompt_throughput = 0.0
        self._last_generation_throughput = 0.0

    def record_step(
        self,
        computed_prompt_tokens: int,
        generation_tokens: int,
        preemptions: int,
        new_requests: int,
        prefix_queries: int,
        prefix_hits: int,
    ) -> None:
        """Called after every engine step with that step's deltas."""
        with self._lock:
            self._prompt_tokens += computed_prompt_tokens
            self._generation_tokens += generation_tokens
            self._preemptions += preemptions
            self._caching.observe(new_requests, prefix_queries, prefix_hits)

    def make_line(self, snapshot: StatsSnapshot) -> tuple[int, str]:
        """(log level, message) for this interval; resets the interval counters."""
        now = self._clock()
        with self._lock:
            elapsed_s = max(now - self._last_log_time, 1e-9)
            prompt_throughput = self._prompt_tokens / elapsed_s
            generation_throughput = self._generation_tokens / elapsed_s
            preemptions = self._preemptions
            caching_empty = self._caching.empty
            hit_rate = self._caching.hit_rate
            self._prompt_tokens = self._generation_tokens = self._preemptions = 0
            self._last_log_time = now
        idle = not any(
            (prompt_throughput, generation_throughput, self._last_prompt_throughput, self._last_generation_throughput)
        )
        self._last_prompt_throughput = prompt_throughput
        self._last_generation_throughput = generation_throughput
        parts = [
            f"Avg prompt throughput: {prompt_throughput:.1f} tokens/s",
            f"Avg generation throughput: {generation_throughput:.1f} tokens/s",
            f"Running: {snapshot.running} reqs",
            f"Waiting: {snapshot.waiting} reqs",
        ]
        if preemptions > 0:
            parts.append(f"Preemptions: {preemptions}")
        parts.append(f"{self.device} KV cache usage: {snapshot.kv_cache_usage * 100:.1f}%")
        if not caching_empty:
            parts.append(f"Prefix cache hit rate: {hit_rate * 100:.1f}%")
        message = f"Engine {self.engine_index:03d}: " + ", ".join(parts)
        return (logging.DEBUG if idle else logging.INFO), message

    def log(self, snapshot: StatsSnapshot) -> str:
        level, message = self.make_line(snapshot)
        logger.log(level, message)
        return message
