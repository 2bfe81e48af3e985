"""Scheduler and iteration statistics the server turns into vLLM's metrics and stats line."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class SchedulerStats:
    num_running_reqs: int
    num_waiting_reqs: int
    kv_cache_usage: float  # 0–1, cached-but-free blocks count as free (vllm:kv_cache_usage_perc)
    num_preemptions_total: int  # cumulative
    prefix_cache_queries: int  # cumulative, tokens
    prefix_cache_hits: int  # cumulative, tokens
    num_gpu_blocks: int


@dataclasses.dataclass
class IterationStats:
    num_prompt_tokens: int = 0  # prompt tokens computed in the step (cached ones excluded)
    num_generation_tokens: int = 0
    num_preemptions: int = 0
    num_scheduled_tokens: int = 0  # vllm:iteration_tokens_total observes this
    num_finished: int = 0
