"""Recommend a `vllm serve` launch for vLLM's CPU backend, where the KV space is given.

Why not plan.py: its steps (precision, TP/PP by interconnect, utilisation) are about GPUs.
On the CPU backend the user names the KV space, so the only questions are whether one
max-length request (and the workload, if given) fits in it, and if not, which of vLLM's
two remedies applies: a shorter --max-model-len (when the user did not pin it and vLLM's
own estimate still covers the workload) or a larger KV space, in the unit the user chose
(whole GiB for VLLM_CPU_KVCACHE_SPACE, bytes for --kv-cache-memory-bytes). Pure.
"""

from __future__ import annotations

import math
import shlex

from pydantic import BaseModel

from advisor.advise.plan import Recommendation
from advisor.advise.search import Workload
from advisor.catalog.models import ModelSpec
from advisor.catalog.vllm_versions import parse_version
from advisor.collect.kv_space import CPU_KV_SPACE_ENV
from advisor.memory.budget import LaunchConfig
from advisor.memory.cpu_backend import (
    CPU_KV_SPACE_UNIT_BYTES,
    MODELLED_VLLM,
    NULL_BLOCKS,
    CpuKvSizing,
    CpuKvSpace,
    size_cpu_kv,
)

# LaunchConfig field → vllm serve flag, for flags passed through as the user pinned them.
PASSED_THROUGH = {
    "dtype": "--dtype",
    "quantization": "--quantization",
    "kv_cache_dtype": "--kv-cache-dtype",
    "tensor_parallel_size": "--tensor-parallel-size",
    "pipeline_parallel_size": "--pipeline-parallel-size",
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "max_num_seqs": "--max-num-seqs",
    "max_num_batched_tokens": "--max-num-batched-tokens",
    "block_size": "--block-size",
    "enforce_eager": "--enforce-eager",
}


class CpuPlan(BaseModel):
    """The recommended CPU launch: flags, KV space, its sizing, reasons and the command, and the
    sizing of the launch as given (what vLLM would do with it today)."""

    launch: LaunchConfig
    space: CpuKvSpace
    sizing: CpuKvSizing
    given_sizing: CpuKvSizing
    recommendations: list[Recommendation]
    warnings: list[str]
    command: str


def recommend_cpu(
    model: ModelSpec, given: LaunchConfig, space: CpuKvSpace, pinned: frozenset[str], workload: Workload
) -> CpuPlan:
    """The launch to run: the given one when it starts and holds the workload, else the fix."""
    before = size_cpu_kv(model, given, space)
    launch = _capped_length(given, before, pinned, workload)
    length = launch.max_model_len or model.max_position_embeddings
    chosen = _space_for(space, _blocks_needed(before, length, workload), before.bytes_per_block)
    after = size_cpu_kv(model, launch, chosen)
    recs = [_space_reason(space, chosen, before, after, workload), _length_reason(model, before, after, pinned)]
    recs += [_pinned(field, getattr(launch, field)) for field in PASSED_THROUGH if field in pinned]
    target = shlex.quote(model.source_path or model.hf_id or model.name)
    env = " ".join(f"{k}={v}" for k, v in chosen.env().items())
    flags = " ".join(f"{r.flag} {r.value}".strip() for r in recs if r.flag.startswith("--"))
    command = " ".join(part for part in (env, "vllm serve", target, flags) if part)
    return CpuPlan(
        launch=launch,
        space=chosen,
        sizing=after,
        given_sizing=before,
        recommendations=recs,
        warnings=_warnings(model, space, before, after, workload),
        command=command,
    )


def _capped_length(
    given: LaunchConfig, before: CpuKvSizing, pinned: frozenset[str], workload: Workload
) -> LaunchConfig:
    """vLLM's "decrease max_model_len" remedy, taken only when the user left the length open
    and vLLM's estimate still serves the workload's p95 request."""
    estimate = before.estimated_max_model_len
    if "max_model_len" in pinned or not estimate or estimate < (workload.p95_total_tokens or 0):
        return given
    return given.model_copy(update={"max_model_len": estimate})


def _blocks_needed(before: CpuKvSizing, length: int, workload: Workload) -> int:
    """Blocks the pool must have: one request of `length`, or the workload's KV tokens if more,
    plus the null block vLLM holds back."""
    per_request = math.ceil(length / before.block_size)
    need = workload.kv_tokens_needed() or 0
    return max(per_request, math.ceil(need / before.block_size)) + NULL_BLOCKS


def _space_for(space: CpuKvSpace, blocks: int, bytes_per_block: int) -> CpuKvSpace:
    """The given space if it has `blocks`, else the smallest in the user's unit that does."""
    if space.bytes // bytes_per_block >= blocks:
        return CpuKvSpace(cpu_kvcache_space_gib=space.cpu_kvcache_space_gib) if space.env() else space
    needed = blocks * bytes_per_block
    if space.env():
        return CpuKvSpace(cpu_kvcache_space_gib=math.ceil(needed / CPU_KV_SPACE_UNIT_BYTES))
    return CpuKvSpace(kv_cache_memory_bytes=needed)


def _space_reason(
    space: CpuKvSpace, chosen: CpuKvSpace, before: CpuKvSizing, after: CpuKvSizing, workload: Workload
) -> Recommendation:
    flag, value = _space_words(chosen)
    holds = (
        f"{after.num_blocks:,} blocks of {after.block_size} tokens → {after.kv_cache_tokens:,} KV tokens, "
        f"{after.max_concurrency:.2f} requests of {after.max_model_len:,} tokens at once"
    )
    if chosen.bytes == space.bytes:
        return Recommendation(flag=flag, value=value, reason=f"pinned by you: {holds}")
    need = workload.kv_tokens_needed()
    if need and math.ceil(need / after.block_size) > after.blocks_per_request:
        why = f"{workload.target_concurrency} concurrent p95 requests need {need:,} KV tokens"
    else:
        why = f"one request of {after.max_model_len:,} tokens needs {after.blocks_per_request} blocks"
    return Recommendation(
        flag=flag,
        value=value,
        reason=(
            f"{space.source} holds {before.num_blocks:,} blocks; {why}, plus the null block vLLM holds back: {holds}"
        ),
    )


def _space_words(space: CpuKvSpace) -> tuple[str, str]:
    """(flag, value) as a Recommendation spells the KV space: the env assignment or the flag."""
    if space.env():
        return f"{CPU_KV_SPACE_ENV}={space.cpu_kvcache_space_gib}", ""
    return "--kv-cache-memory-bytes", str(space.kv_cache_memory_bytes)


def _length_reason(model: ModelSpec, before: CpuKvSizing, after: CpuKvSizing, pinned: frozenset[str]) -> Recommendation:
    if "max_model_len" in pinned:
        reason = "pinned by you"
    elif after.max_model_len < model.max_position_embeddings:
        reason = (
            f"the model's {model.max_position_embeddings:,} does not fit in {before.kv_space_source}; "
            f"this is vLLM's own estimated maximum model length"
        )
    else:
        reason = f"the model's own limit fits ({after.max_concurrency:.2f} requests of that length at once)"
    return Recommendation(flag="--max-model-len", value=str(after.max_model_len), reason=reason)


def _pinned(field: str, value: object) -> Recommendation:
    reason = "pinned by you"
    if field == "gpu_memory_utilization":
        reason += " (the CPU backend ignores it while the KV space is explicit)"
    return Recommendation(flag=PASSED_THROUGH[field], value="" if value is True else str(value), reason=reason)


def _warnings(
    model: ModelSpec, space: CpuKvSpace, before: CpuKvSizing, after: CpuKvSizing, workload: Workload
) -> list[str]:
    """What the operator must know: vLLM's override order, the given launch's failure, limits."""
    warnings: list[str] = []
    if space.cpu_kvcache_space_gib is not None and space.kv_cache_memory_bytes is not None:
        warnings.append(
            f"{CPU_KV_SPACE_ENV}={space.cpu_kvcache_space_gib} replaces --kv-cache-memory-bytes "
            f"{space.kv_cache_memory_bytes} in vLLM (platforms/cpu.py reads the variable last), so vLLM sizes "
            f"{space.cpu_kvcache_space_gib} GiB; the recommended command keeps only the variable"
        )
    if not before.fits:
        warnings.append(f"this launch does not start on vLLM's CPU backend: {before.failure}")
    if parse_version(before.vllm_version) < parse_version(MODELLED_VLLM):
        warnings.append(
            f"the CPU backend's KV sizing is replayed from vLLM {MODELLED_VLLM}; vLLM "
            f"{before.vllm_version} may use another block size or no null-block reserve"
        )
    p95 = workload.p95_total_tokens
    if p95 and after.max_model_len < p95:
        warnings.append(
            f"--max-model-len {after.max_model_len} is below the workload's p95 request "
            f"({p95} tokens): longer requests are rejected with HTTP 400"
        )
    if before.max_model_len > model.max_position_embeddings:
        warnings.append(
            f"--max-model-len {before.max_model_len} exceeds the model's "
            f"{model.max_position_embeddings}; vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
        )
    return warnings
