"""Figures several rules need, each with vLLM's default when the facts do not say.

Kept here so that "what is the current --gpu-memory-utilization?" has one answer across the
catalog (0.90 up to vLLM 0.19, 0.92 from 0.20, per the format reference §4.2).
"""

from __future__ import annotations

import math

from rules import signals
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Evidence

DEFAULT_BLOCK_SIZE = 16
DEFAULT_MAX_NUM_SEQS = 256
DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048
SAFE_MAX_GPU_MEMORY_UTILIZATION = 0.95


def vllm_version(facts: Facts) -> tuple[int, int] | None:
    """(major, minor) from the config or the version log line; None if unknown."""
    text = facts.config.vllm_version if facts.config and facts.config.vllm_version else None
    if text is None:
        event = facts.last_event(LogEventKind.VERSION)
        text = event.version if event else None
    if text is None and facts.endpoint is not None:
        text = facts.endpoint.version
    if not text:
        return None
    parts = text.lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def on_cpu_backend(facts: Facts) -> bool:
    """vLLM's CPU backend (device_config=cpu): no GPU, no CUDA graphs, KV space given in bytes."""
    return facts.config is not None and facts.config.device == "cpu"


def gpu_memory_utilization(facts: Facts) -> float:
    """The configured value, else the value a startup error printed, else vLLM's default."""
    if facts.config and facts.config.gpu_memory_utilization is not None:
        return facts.config.gpu_memory_utilization
    event = facts.last_event(LogEventKind.FREE_MEMORY_BELOW_REQUESTED)
    if event and event.gpu_memory_utilization is not None:
        return event.gpu_memory_utilization
    version = vllm_version(facts)
    return 0.92 if version is not None and version >= (0, 20) else 0.90


def block_size(facts: Facts) -> int:
    if facts.config and facts.config.block_size:
        return facts.config.block_size
    if facts.memory and facts.memory.block_size:
        return facts.memory.block_size
    return DEFAULT_BLOCK_SIZE


def max_num_seqs(facts: Facts) -> int | None:
    return facts.config.max_num_seqs if facts.config else None


def default_max_num_seqs(facts: Facts) -> int:
    """vLLM's API-server default: 1024 on GPUs with >= 70 GiB (not A100, from 0.9), else 256 (§4.2)."""
    hardware = facts.hardware
    if hardware and hardware.usable_gib and hardware.usable_gib >= 70:
        if "A100" not in (hardware.gpu_name or "").upper():
            return 1024
    return DEFAULT_MAX_NUM_SEQS


def tensor_parallel_size(facts: Facts) -> int:
    if facts.config and facts.config.tensor_parallel_size:
        return facts.config.tensor_parallel_size
    return 1


def total_gib(facts: Facts) -> float | None:
    """Usable memory of one GPU: measured (memory facts, startup error) before catalog."""
    if facts.memory and facts.memory.total_gib:
        return facts.memory.total_gib
    for kind in (LogEventKind.FREE_MEMORY_BELOW_REQUESTED, LogEventKind.CUDA_OOM):
        event = facts.last_event(kind)
        if event and event.total_gib:
            return event.total_gib
    if facts.hardware and facts.hardware.usable_gib:
        return facts.hardware.usable_gib
    return None


def weights_gib(facts: Facts) -> float | None:
    """Weights per GPU: the model-loading log line, else the advisor's figure."""
    event = facts.last_event(LogEventKind.MODEL_LOADING)
    if event and event.weights_gib:
        return event.weights_gib
    if facts.memory and facts.memory.weights_gib:
        return facts.memory.weights_gib
    return None


def fp8_supported(facts: Facts) -> bool | None:
    return facts.hardware.fp8_supported if facts.hardware else None


def gpu_count(facts: Facts) -> int | None:
    return facts.hardware.gpu_count if facts.hardware else None


def round_down(value: float, step: int) -> int:
    return max(step, int(value // step) * step)


def next_power_of_two(value: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1.0, value))))


def workload_tokens_p95(facts: Facts) -> float | None:
    """p95 input + p95 output tokens per request (an upper bound on one request's KV)."""
    work = facts.workload
    if work is None or work.p95_input_tokens is None:
        return None
    return work.p95_input_tokens + (work.p95_output_tokens or 0.0)


def workload_evidence(facts: Facts) -> Evidence | None:
    tokens = workload_tokens_p95(facts)
    if tokens is None:
        return None
    return Evidence(source="workload", name="p95 input + p95 output tokens", value=tokens, unit="tokens")


def log_evidence(event, name: str | None = None, value=None, threshold=None, comparison=None, unit=None) -> Evidence:
    """Evidence quoting a log line with its file and line number."""
    where = None
    if event.source_file or event.line_no is not None:
        where = f"{event.source_file or 'log'}:{event.line_no if event.line_no is not None else '?'}"
    return Evidence(
        source="log", name=name or event.kind.value, value=value, threshold=threshold,
        comparison=comparison, unit=unit, location=where, raw=event.raw or None,
    )


def util_text(value: float) -> str:
    return f"{value:.2f}"


def printed_after(facts: Facts, event: LogEvent, *kinds: LogEventKind) -> bool:
    """Whether an event of `kinds` was printed before `event` in the same log."""
    return event.line_no is not None and any(
        e.line_no is not None and e.line_no < event.line_no and e.source_file == event.source_file
        for e in facts.events_of(*kinds))


def follows_engine_death(facts: Facts, event: LogEvent) -> bool:
    """A process death printed after `EngineCore encountered a fatal error` / EngineDeadError in the same
    log: vLLM's shutdown chain (fatal error -> EngineDeadError -> `Engine core proc … died unexpectedly`)."""
    return event.kind == LogEventKind.WORKER_DIED and printed_after(
        facts, event, LogEventKind.FATAL_ERROR, LogEventKind.ENGINE_DEAD)


def prompt_p95(facts: Facts) -> signals.Signal | None:
    """p95 prompt tokens: vLLM's own histogram over the window, else the workload's figure."""
    measured = signals.quantile(facts, "vllm:request_prompt_tokens", "p95")
    if measured is not None:
        return measured
    if facts.workload and facts.workload.p95_input_tokens:
        value = facts.workload.p95_input_tokens
        return signals.Signal(value, Evidence(source="workload", name="p95 input tokens", value=value, unit="tokens"))
    return None
