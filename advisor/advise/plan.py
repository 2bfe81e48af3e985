"""Recommend a `vllm serve` launch, following the runbook's four steps in order.

1. Precision by hardware support: BF16 while its weights leave ≥ 25 % of each GPU for KV;
   otherwise FP8 weights where the GPU runs FP8 W8A8 (Ada, Hopper, Blackwell, AMD).
2. Parallelism by interconnect: the fewest GPUs per replica that serve the workload; spread
   a model over GPUs with TP on NVLink/XGMI, with PP on PCIe (TP all-reduces every layer);
   leftover GPUs become data-parallel replicas.
3. Memory and batch envelope: utilisation at the version default, max_model_len at the
   model's own unless it does not fit, max_num_seqs no higher than the KV pool holds at the
   workload's p95 length (beyond it vLLM preempts), max_num_batched_tokens ≥ a p95 prompt.
4. Free wins: prefix caching pinned on when reuse is high; FP8 KV when capacity is short.

Every flag comes with its reason; what the user pinned is kept and only warned about.
The search through the steps is in plan_search.py; this module holds the plan, `recommend`,
and the reason for each flag and the warnings. Pure: memory figures come from
`advisor.memory.budget.estimate_memory`.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from advisor.advise.search import (
    HIGH_PREFIX_REUSE,
    NVLINK_DOMAIN_GPUS,
    WEIGHTS_SHARE_WARNING,
    Workload,
    choose,
    envelope,
    gpus_needed,
)
from advisor.catalog.gpus import GpuSpec, Interconnect
from advisor.catalog.models import ModelSpec
from advisor.catalog.vllm_versions import Version, parse_version
from advisor.memory.budget import LaunchConfig, MemoryBreakdown, estimate_memory
from advisor.memory.launch_check import checked, launch_refusals


class Recommendation(BaseModel):
    flag: str
    value: str
    reason: str


class Plan(BaseModel):
    launch: LaunchConfig
    data_parallel_size: int
    memory: MemoryBreakdown
    recommendations: list[Recommendation]
    warnings: list[str]
    command: str


def recommend(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    interconnect: Interconnect,
    given: LaunchConfig,
    pinned: frozenset[str],
    workload: Workload,
) -> Plan:
    """The recommended launch for `gpus` GPUs; `pinned` names LaunchConfig fields the user set."""
    version = parse_version(given.vllm_version)
    need = workload.kv_tokens_needed()
    choice = choose(model, gpu, gpus, interconnect, given, pinned, workload, need)
    launch, memory = envelope(model, gpu, choice, pinned, workload)
    refusals = launch_refusals(model, launch)
    memory = checked(memory, model, launch)  # vLLM's config checks: no "starts: yes" for what it refuses
    replicas = max(1, gpus // (launch.tensor_parallel_size * launch.pipeline_parallel_size))
    recs = _reasons(model, gpu, interconnect, launch, memory, replicas, pinned, workload, version)
    warnings = _warnings(model, gpu, interconnect, launch, memory, replicas, workload, need)
    if not memory.fits and not refusals:  # more GPUs help a launch that does not fit, not one vLLM refuses
        warnings.append(gpus_needed(model, gpu, gpus, interconnect, given, pinned, workload))
    target = model.source_path or model.hf_id or model.name
    launcher = ["vllm serve", target]
    if gpu.arch == "cpu":  # the bundled engine speaks vLLM's flags; its budget is stated
        launcher = ["servops serve", target, f"--device cpu --device-memory-gib {gpu.usable_gib:g}"]
    command = " ".join([*launcher, *(f"{r.flag} {r.value}".strip() for r in recs)])
    return Plan(
        launch=launch,
        data_parallel_size=replicas,
        memory=memory,
        recommendations=recs,
        warnings=warnings,
        command=command,
    )


# --- reasons and warnings -------------------------------------------------------------------


class _Reasons:
    """The recommendations as they are added: a flag the user pinned is kept with "pinned by you", so its
    reason (some cost an estimate) is worked out only for the flags servops chose."""

    def __init__(self, pinned: frozenset[str]) -> None:
        self.pinned = pinned
        self.recs: list[Recommendation] = []

    def add(self, field: str | None, flag: str, value: object, because: Callable[[], str]) -> None:
        reason = "pinned by you" if field in self.pinned else because()
        self.recs.append(Recommendation(flag=flag, value="" if value is True else str(value), reason=reason))


def _reasons(
    model: ModelSpec,
    gpu: GpuSpec,
    interconnect: Interconnect,
    launch: LaunchConfig,
    memory: MemoryBreakdown,
    replicas: int,
    pinned: frozenset[str],
    workload: Workload,
    version: Version,
) -> list[Recommendation]:
    reasons = _Reasons(pinned)
    _parallel_reasons(reasons, model, gpu, interconnect, launch, memory, replicas)
    _envelope_reasons(reasons, model, launch, memory, workload, version)
    _feature_reasons(reasons, launch, workload)
    return reasons.recs


def _parallel_reasons(
    reasons: _Reasons,
    model: ModelSpec,
    gpu: GpuSpec,
    interconnect: Interconnect,
    launch: LaunchConfig,
    memory: MemoryBreakdown,
    replicas: int,
) -> None:
    """Precision and parallelism: steps 1 and 2 of the runbook."""
    tp, pp = launch.tensor_parallel_size, launch.pipeline_parallel_size
    if launch.quantization and launch.quantization != model.native_quantization:
        reasons.add(
            "quantization",
            "--quantization",
            launch.quantization,
            lambda: _quantization_reason(model, gpu, launch, memory),
        )
    if tp > 1:
        reasons.add(
            "tensor_parallel_size",
            "--tensor-parallel-size",
            tp,
            lambda: (
                f"weights and KV need {tp * pp} GPUs per replica; TP over {interconnect} splits every layer "
                "and keeps per-token latency low"
            ),
        )
    _spread_reasons(reasons, interconnect, pp, replicas)


def _spread_reasons(reasons: _Reasons, interconnect: Interconnect, pp: int, replicas: int) -> None:
    """Beyond one tensor-parallel group: pipeline stages and data-parallel replicas, each said where it runs."""
    if pp > 1:
        across = (
            "over PCIe"
            if interconnect == "pcie"
            else f"across boards (TP stays within {NVLINK_DOMAIN_GPUS} NVLink GPUs)"
        )
        reasons.add(
            "pipeline_parallel_size",
            "--pipeline-parallel-size",
            pp,
            lambda: (
                f"{pp} stages by layer: PP moves activations once per stage instead of all-reducing every "
                f"layer, so it goes {across}"
            ),
        )
    if replicas > 1:
        reasons.add(
            None,
            "--data-parallel-size",
            replicas,
            lambda: (
                f"the remaining GPUs serve as {replicas} independent replicas "
                "(more throughput without cross-GPU traffic per token)"
            ),
        )


def _envelope_reasons(
    reasons: _Reasons,
    model: ModelSpec,
    launch: LaunchConfig,
    memory: MemoryBreakdown,
    workload: Workload,
    version: Version,
) -> None:
    """The memory and batch envelope: step 3."""
    reasons.add(
        "gpu_memory_utilization",
        "--gpu-memory-utilization",
        memory.gpu_memory_utilization,
        lambda: (
            f"vLLM {'.'.join(map(str, version[:2]))} default; the profiled non-KV memory leaves "
            f"{memory.kv_pool_gib:.2f} GiB per GPU for KV"
        ),
    )
    reasons.add(
        "max_model_len",
        "--max-model-len",
        memory.max_model_len,
        lambda: (
            f"the model's {model.max_position_embeddings} does not fit; this is the largest 1024-multiple that does"
            if memory.max_model_len < model.max_position_embeddings
            else f"the model's own limit fits ({memory.max_concurrency:.2f} requests of that length at once)"
        ),
    )
    if launch.max_num_seqs is not None:
        reasons.add(
            "max_num_seqs",
            "--max-num-seqs",
            launch.max_num_seqs,
            lambda: (
                f"the KV pool holds {launch.max_num_seqs} sequences of the p95 length "
                f"({workload.p95_total_tokens} tokens, reused prefix counted once); admitting more "
                "makes vLLM preempt and recompute"
            ),
        )
    if launch.max_num_batched_tokens is not None:
        reasons.add(
            "max_num_batched_tokens",
            "--max-num-batched-tokens",
            launch.max_num_batched_tokens,
            lambda: (
                f"a p95 prompt ({workload.p95_input_tokens} tokens) prefills in one step: lower TTFT "
                "(larger steps raise ITL; 2048 favours ITL)"
            ),
        )


def _feature_reasons(reasons: _Reasons, launch: LaunchConfig, workload: Workload) -> None:
    """Free wins and what the user turned on: step 4."""
    if launch.kv_cache_dtype != "auto":
        reasons.add(
            "kv_cache_dtype",
            "--kv-cache-dtype",
            launch.kv_cache_dtype,
            lambda: (
                "KV capacity is short of the target concurrency; FP8 KV doubles KV tokens "
                "(calibrate scales for quality)"
            ),
        )
    if launch.enable_prefix_caching:
        reasons.add(
            "enable_prefix_caching",
            "--enable-prefix-caching",
            True,
            lambda: (
                f"prefix reuse {workload.prefix_reuse:.0%} ≥ {HIGH_PREFIX_REUSE:.0%}: cached prefixes skip "
                "prefill (on by default in V1; pinned so it survives config changes)"
            ),
        )
    if launch.block_size is not None:
        reasons.add(None, "--block-size", launch.block_size, lambda: "pinned by you")
    if launch.enforce_eager:
        reasons.add(
            None, "--enforce-eager", True, lambda: "pinned by you; frees the CUDA-graph pool at some decode speed"
        )


def _quantization_reason(model, gpu, launch: LaunchConfig, memory: MemoryBreakdown) -> str:
    bf16 = estimate_memory(model, gpu, launch.model_copy(update={"quantization": None}))
    share = bf16.weights_gib / bf16.total_gib
    why = (
        f"BF16 weights would take {share:.0%} of each GPU (> {WEIGHTS_SHARE_WARNING:.0%})"
        if share > WEIGHTS_SHARE_WARNING
        else f"BF16 leaves {max(bf16.kv_pool_gib, 0):.2f} GiB KV per GPU, short of the workload"
    )
    return (
        f"{why}; {gpu.name} runs FP8 W8A8: weights {memory.weights_gib:.2f} GiB per GPU, "
        f"KV {memory.kv_pool_gib:.2f} GiB (small accuracy risk)"
    )


def _warnings(model, gpu, interconnect, launch, memory, replicas, workload, need) -> list[str]:
    warnings: list[str] = []
    tp = launch.tensor_parallel_size
    if memory.weights_gib > WEIGHTS_SHARE_WARNING * memory.total_gib:
        warnings.append(
            f"weights {memory.weights_gib:.2f} GiB > {WEIGHTS_SHARE_WARNING:.0%} of {memory.total_gib:.2f} GiB "
            "per GPU: expect low concurrency; a larger GPU, more TP or a quantized model helps"
        )
    if not memory.fits:
        warnings.append(f"this launch does not start on {gpu.name}: {memory.failure}")
    p95 = workload.p95_total_tokens
    if p95 and memory.max_model_len < p95:
        warnings.append(
            f"--max-model-len {memory.max_model_len} is below the workload's p95 request "
            f"({p95} tokens): longer requests are rejected with HTTP 400"
        )
    if p95 and p95 > model.max_position_embeddings:
        warnings.append(
            f"the workload's p95 request ({p95} tokens) exceeds {model.name}'s "
            f"max_position_embeddings {model.max_position_embeddings}"
        )
    if need is not None and memory.fits and memory.kv_cache_tokens * replicas < need:
        warnings.append(
            f"KV capacity {memory.kv_cache_tokens * replicas} tokens is short of the "
            f"{need} that {workload.target_concurrency} concurrent p95 requests need: expect "
            "queueing/preemption; add GPUs or replicas"
        )
    if tp > 1 and interconnect == "pcie":
        warnings.append(f"TP {tp} over PCIe all-reduces every layer: per-token latency suffers; prefer NVLink or PP")
    if model.attention == "gqa" and tp > model.num_key_value_heads:
        warnings.append(
            f"{model.name} has {model.num_key_value_heads} KV heads and TP {tp}: KV heads are "
            "replicated, so KV per GPU does not shrink past TP "
            f"{model.num_key_value_heads}"
        )
    if launch.quantization == "fp8" and not gpu.fp8_w8a8:
        warnings.append(
            f"{gpu.name} has no FP8 W8A8 in vLLM: FP8 runs weight-only via Marlin "
            "(memory saved, no FP8 compute speedup)"
        )
    if launch.max_model_len and launch.max_model_len > model.max_position_embeddings:
        warnings.append(
            f"--max-model-len {launch.max_model_len} exceeds the model's "
            f"{model.max_position_embeddings}; vLLM refuses it unless "
            "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
        )
    return warnings
