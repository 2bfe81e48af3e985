"""Scheduler and iteration statistics the server turns into vLLM's metrics and stats line."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any


@dataclasses.dataclass
class SchedulerStats:
    num_running_reqs: int
    num_waiting_reqs: int
    kv_cache_usage: float  # 0–1, cached-but-free blocks count as free (vllm:kv_cache_usage_perc)
    num_preemptions_total: int  # cumulative
    prefix_cache_queries: int  # cumulative, tokens
    prefix_cache_hits: int  # cumulative, tokens
    num_gpu_blocks: int
    # Tokens (rows) the step just scheduled computes; 0 when read between steps. The server's CPU
    # thread policy reads it before the model runs (engine/api/threads.py).
    num_scheduled_tokens: int = 0


@dataclasses.dataclass
class IterationStats:
    num_prompt_tokens: int = 0  # prompt tokens computed in the step (cached ones excluded)
    num_generation_tokens: int = 0
    num_preemptions: int = 0
    num_scheduled_tokens: int = 0  # vllm:iteration_tokens_total observes this
    num_finished: int = 0


def scheduler_fields(stats: Any) -> dict[str, Any]:
    """Read SchedulerStats whatever its exact field names (dataclass or dict)."""

    def pick(*names: str, default: Any = 0) -> Any:
        for name in names:
            value = stats.get(name) if isinstance(stats, dict) else getattr(stats, name, None)
            if value is not None:
                return value
        return default

    return {
        "running": int(pick("num_running_reqs", "running", "num_running")),
        "waiting": int(pick("num_waiting_reqs", "waiting", "num_waiting")),
        "kv_cache_usage": float(pick("kv_cache_usage", "gpu_cache_usage", default=0.0)),
        "preemptions": int(pick("num_preemptions_total", "num_preemptions", "preemptions")),
        "queries": int(pick("prefix_cache_queries", "prefix_queries")),
        "hits": int(pick("prefix_cache_hits", "prefix_hits")),
        "num_gpu_blocks": int(pick("num_gpu_blocks", "num_blocks")),
    }


def iteration_prompt_tokens(engine: Any) -> int:
    """Prompt tokens computed in the last step (cached tokens excluded), for the stats line."""
    getter: Callable[[], Any] | None = getattr(engine, "last_iteration_stats", None)
    if getter is None:
        return 0
    stats = getter()
    for name in ("num_prompt_tokens", "prompt_tokens", "num_computed_prompt_tokens"):
        value = stats.get(name) if isinstance(stats, dict) else getattr(stats, name, None)
        if value is not None:
            return int(value)
    return 0
