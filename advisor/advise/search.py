"""The runbook's steps as a search: which precision, layout and envelope a launch gets.

Why apart from plan.py: this decides the launch, plan.py explains it. `choose` walks the
candidate launches in the runbook's order of preference (precision by hardware support, FP8 KV
where the GPU has it, TP/PP by interconnect) and takes the first that starts and serves the
workload; `envelope` sets the memory and batch limits around it and pins prefix caching on when
reuse is high; `gpus_needed` says how many GPUs a launch that fits nowhere would take. The
thresholds they apply are here; plan.py quotes them in its reasons. Pure: memory figures come
from `advisor.memory.budget.estimate_memory`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from pydantic import BaseModel, Field

from advisor.catalog.models import ModelSpec, valid_tp
from advisor.catalog.vllm_versions import default_max_num_batched_tokens, default_max_num_seqs, parse_version
from advisor.memory.budget import LaunchConfig, MemoryBreakdown, estimate_memory
from rules.catalog.common import NVLINK_DOMAIN_GPUS


class Workload(BaseModel):
    """What the deployment must serve; every field optional."""

    p95_input_tokens: int | None = Field(None, ge=1)
    p95_output_tokens: int | None = Field(None, ge=1)
    prefix_reuse: float | None = Field(None, ge=0, le=1)
    target_concurrency: int | None = Field(None, ge=1)

    @property
    def p95_total_tokens(self) -> int | None:
        if self.p95_input_tokens is None and self.p95_output_tokens is None:
            return None
        return (self.p95_input_tokens or 0) + (self.p95_output_tokens or 0)

    def kv_tokens_needed(self) -> int | None:
        """KV tokens for target_concurrency requests of p95 length, a reused prefix stored once."""
        length = self.p95_total_tokens
        if length is None or self.target_concurrency is None:
            return None
        shared = int((self.p95_input_tokens or 0) * (self.prefix_reuse or 0.0))
        return self.target_concurrency * (length - shared) + shared


WEIGHTS_SHARE_WARNING = 0.75  # playbook: weights > 75 % of VRAM → expect low concurrency
HIGH_PREFIX_REUSE = 0.3  # llm-d runbook: hit rate < 30 % is the "check cacheability" line


# --- steps 1 and 2: precision and parallelism ---------------------------------------------


def choose(model, gpu, gpus, interconnect, given, pinned, workload, need) -> LaunchConfig:
    """First candidate, in runbook preference order, that starts and serves the workload."""
    best: tuple[float, LaunchConfig] | None = None
    for candidate in _candidates(model, gpu, gpus, interconnect, given, pinned):
        memory = estimate_memory(model, gpu, candidate)
        replicas = max(1, gpus // (candidate.tensor_parallel_size * candidate.pipeline_parallel_size))
        heavy = memory.weights_gib > WEIGHTS_SHARE_WARNING * memory.total_gib
        starts = memory.fits or (
            "max_model_len" not in pinned
            and memory.num_blocks > 0
            and memory.max_model_len_that_fits >= _required_len(model, workload)
        )
        served = need is None or memory.num_blocks * memory.block_size * replicas >= need
        if starts and served and not (heavy and _has_lighter_option(model, gpu, candidate, pinned)):
            return candidate
        capacity = memory.num_blocks * memory.block_size * replicas if starts else -memory.weights_gib
        if best is None or capacity > best[0]:
            best = (capacity, candidate)
    assert best is not None  # _candidates always yields the given launch
    return best[1]


def gpus_needed(model, gpu, gpus, interconnect, given, pinned, workload) -> str:
    """When nothing fits: the smallest power-of-two GPU count (≤ 64) whose best plan starts."""
    count = gpus
    pins = pinned - {"tensor_parallel_size", "pipeline_parallel_size"}  # the search may change the GPU split
    while count < 64:
        count *= 2
        choice = choose(model, gpu, count, interconnect, given, pins, workload, None)
        if estimate_memory(model, gpu, choice).fits or _choose_caps_context(model, gpu, choice, pins, workload):
            return (
                f"no launch of {model.name} starts on {gpus}× {gpu.name}; it needs at least {count} "
                f"(e.g. TP {choice.tensor_parallel_size} × PP {choice.pipeline_parallel_size}"
                f"{', --quantization ' + choice.quantization if choice.quantization else ''})"
            )
    held = ", ".join("--" + name.replace("_", "-") for name in sorted(pins))
    if held:  # what the user fixed may be what no GPU count can start (--gpu-memory-utilization 1.0)
        return f"no launch of {model.name} starts on up to 64× {gpu.name} with what you pinned ({held}); try without it"
    return f"no launch of {model.name} starts on up to 64× {gpu.name}"


def _choose_caps_context(model, gpu, choice: LaunchConfig, pinned, workload) -> bool:
    launch, memory = envelope(model, gpu, choice, pinned, workload)
    return memory.fits


def _required_len(model: ModelSpec, workload: Workload) -> int:
    """Context a launch must serve to be acceptable when max_model_len may be capped:
    the workload's p95 request, else the model's limit up to 32K (an assumption: a cap
    below 32K without a workload to justify it would surprise users)."""
    return workload.p95_total_tokens or min(model.max_position_embeddings, 32768)


def _candidates(model, gpu, gpus, interconnect, given, pinned) -> Iterator[LaunchConfig]:
    quants: list[str | None] = [given.quantization]
    if "quantization" not in pinned and model.native_quantization is None and gpu.fp8_w8a8:
        quants.append("fp8")
    kv_dtypes = [given.kv_cache_dtype]
    if "kv_cache_dtype" not in pinned and gpu.fp8_kv_cache:
        kv_dtypes.append("fp8")
    for quant in quants:
        for kv_dtype in kv_dtypes:
            for tp, pp in _layouts(model, gpus, interconnect, given, pinned):
                yield given.model_copy(
                    update={
                        "quantization": quant,
                        "kv_cache_dtype": kv_dtype,
                        "tensor_parallel_size": tp,
                        "pipeline_parallel_size": pp,
                    }
                )


def _layouts(model, gpus, interconnect, given, pinned) -> list[tuple[int, int]]:
    """(tp, pp) options by GPUs per replica, then TP-first on NVLink/XGMI, PP-first on PCIe."""
    sizes = [1 << i for i in range(0, max(1, gpus).bit_length())]
    tps = [given.tensor_parallel_size] if "tensor_parallel_size" in pinned else sizes
    pps = [given.pipeline_parallel_size] if "pipeline_parallel_size" in pinned else sizes
    options = [
        (tp, pp)
        for tp in tps
        for pp in pps
        if (tp * pp <= gpus or {"tensor_parallel_size", "pipeline_parallel_size"} & pinned)
        and valid_tp(model, tp)
        and pp <= model.num_hidden_layers
    ]
    prefer_pp = interconnect == "pcie"
    # TP beyond one NVLink board (8 GPUs) would all-reduce across nodes: PP goes there instead.
    options.sort(key=lambda o: (o[0] * o[1], o[0] > NVLINK_DOMAIN_GPUS, o[0] if prefer_pp else o[1]))
    return options or [(given.tensor_parallel_size, given.pipeline_parallel_size)]


def _has_lighter_option(model, gpu, candidate: LaunchConfig, pinned) -> bool:
    return (
        candidate.quantization is None
        and model.native_quantization is None
        and gpu.fp8_w8a8
        and ("quantization" not in pinned)
    )


# --- step 3: memory and batch envelope ----------------------------------------------------


def envelope(model, gpu, choice: LaunchConfig, pinned, workload) -> tuple[LaunchConfig, MemoryBreakdown]:
    version = parse_version(choice.vllm_version)
    memory = estimate_memory(model, gpu, choice)
    update: dict[str, object] = {}
    if "max_model_len" not in pinned and not memory.fits and memory.max_model_len_that_fits > 0:
        fitting = memory.max_model_len_that_fits
        update["max_model_len"] = max(fitting // 1024 * 1024, min(fitting, 1024))
    prompt = workload.p95_input_tokens
    default_batch = default_max_num_batched_tokens(version, gpu)
    if "max_num_batched_tokens" not in pinned and prompt and prompt > default_batch:
        update["max_num_batched_tokens"] = min(16384, math.ceil(prompt / 2048) * 2048)
    if "enable_prefix_caching" not in pinned and (workload.prefix_reuse or 0) >= HIGH_PREFIX_REUSE:
        update["enable_prefix_caching"] = True
    launch = choice.model_copy(update=update)
    length = workload.p95_total_tokens
    if "max_num_seqs" not in pinned and length:
        # Fewer sequences shrink the sampler's activation and the graph pool, which frees
        # blocks: two passes settle it (the second can only hold more, never fewer).
        for _ in range(2):
            probe = estimate_memory(model, gpu, launch)
            holds = _sequences_held(probe, workload, length)
            if not 0 < holds < default_max_num_seqs(version, gpu):
                break
            launch = launch.model_copy(update={"max_num_seqs": holds})
    return launch, estimate_memory(model, gpu, launch)


def _sequences_held(memory: MemoryBreakdown, workload: Workload, length: int) -> int:
    """Sequences of the p95 length the KV pool holds at once, a reused prefix stored once."""
    shared = int((workload.p95_input_tokens or 0) * (workload.prefix_reuse or 0.0))
    return (memory.num_blocks * memory.block_size - shared) // max(1, length - shared)
