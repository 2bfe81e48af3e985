"""Predict what a proposed flag change does to the KV cache, before anyone restarts a server.

For each `ConfigChange` that touches memory (`--max-model-len`, `--gpu-memory-utilization`,
`--kv-cache-dtype`, `--tensor-parallel-size`, `--max-num-seqs`, …) the advisor's memory
model is run twice — the launch as it is, and with the change — and the difference is
reported: KV tokens, max concurrency at max_model_len, whether the server would start.

When the server's own log says how much KV memory it really had ("Available KV cache
memory", or the startup error's figure), the model is calibrated to it: the prediction is
*measured pool + modelled change*, so an imperfect activation estimate does not leak into
the answer. Without a model spec or device size there is no prediction, and the change
says so rather than guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.catalog.gpus import GpuSpec
from advisor.catalog.models import ModelSpec
from advisor.catalog.vllm_versions import parse_bounds, parse_version
from advisor.errors import UserError
from advisor.memory.budget import LaunchConfig, MemoryBreakdown, estimate_memory
from advisor.memory.terms import GIB, blocks_per_request
from rules.catalog.common import kv_gib_at_share
from rules.facts import ServerConfig
from rules.model import ConfigChange, PredictedEffect

# Flag → LaunchConfig field, with how to read the proposed text.
LAUNCH_FLAGS: dict[str, tuple[str, type]] = {
    "--max-model-len": ("max_model_len", int),
    "--gpu-memory-utilization": ("gpu_memory_utilization", float),
    "--kv-cache-dtype": ("kv_cache_dtype", str),
    "--tensor-parallel-size": ("tensor_parallel_size", int),
    "--pipeline-parallel-size": ("pipeline_parallel_size", int),
    "--max-num-seqs": ("max_num_seqs", int),
    "--max-num-batched-tokens": ("max_num_batched_tokens", int),
    "--block-size": ("block_size", int),
    "--enforce-eager": ("enforce_eager", bool),
    "--quantization": ("quantization", str),
    "--dtype": ("dtype", str),
}


@dataclass(slots=True)
class Deployment:
    """What the memory model needs: the model, one GPU, the launch, and the measured pool."""

    model: ModelSpec
    gpu: GpuSpec
    launch: LaunchConfig
    measured_kv_pool_gib: float | None = None


@dataclass(slots=True)
class MeasuredPool:
    """The KV pool as the server reported it (tokens), for when the device size is unknown.

    Enough to predict changes that do not resize the pool: --max-model-len (concurrency),
    --kv-cache-dtype (bytes per token), --max-num-seqs (tokens per running request). With the
    pool's GiB per GPU and the GPU's size (both printed by vLLM or torch), also
    --gpu-memory-utilization: its step times the GPU's size comes off (or onto) the pool, and the
    tokens scale with it.
    """

    kv_cache_tokens: int
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    kv_dtype_bytes: float = 2.0
    pool_gib: float | None = None  # per GPU
    device_gib: float | None = None


POOL_FLAGS = frozenset({"--max-model-len", "--kv-cache-dtype", "--max-num-seqs"})


@dataclass(slots=True)
class KvFigures:
    kv_pool_gib: float
    kv_cache_tokens: int
    max_concurrency: float
    max_model_len: int
    fits: bool
    max_model_len_that_fits: int


def launch_from_config(config: ServerConfig | None, device_util_default: float | None = None) -> LaunchConfig:
    """The LaunchConfig a ServerConfig describes; unknown fields stay at vLLM's defaults."""
    fields: dict[str, object] = {}
    if config is not None:
        for name, _ in LAUNCH_FLAGS.values():
            value = getattr(config, name, None)
            if value is not None:
                fields[name] = value
        if config.vllm_version and _modelled(config.vllm_version):
            fields["vllm_version"] = _major_minor(config.vllm_version)
    if "gpu_memory_utilization" not in fields and device_util_default is not None:
        fields["gpu_memory_utilization"] = device_util_default
    try:
        return LaunchConfig(**fields)
    except ValueError:
        fields.pop("vllm_version", None)
        return LaunchConfig(**{k: v for k, v in fields.items() if k in LaunchConfig.model_fields})


def predict_change(
    change: ConfigChange, deployment: Deployment | None, pool: MeasuredPool | None = None
) -> PredictedEffect:
    """Before → after KV figures for one change, or a note saying why there is none."""
    if change.flag not in LAUNCH_FLAGS:
        return PredictedEffect(text="no memory effect modelled for this flag")
    if deployment is None and pool is not None and (change.flag in POOL_FLAGS or _resizable(change, pool)):
        return predict_from_pool(change, pool)
    if deployment is None:
        return PredictedEffect(text="not predicted: pass --model and --gpu (or --gpu-memory-gib) to size it")
    name, kind = LAUNCH_FLAGS[change.flag]
    try:
        after_launch = deployment.launch.model_copy(update={name: _convert(change.proposed, kind)})
        after_launch = LaunchConfig.model_validate(after_launch.model_dump())
        before = figures(deployment, deployment.launch)
        after = figures(deployment, after_launch)
    except (UserError, ValueError) as exc:
        return PredictedEffect(text=f"not predicted: {str(exc).splitlines()[0][:160]}")
    effect = _effect(before, after)
    if change.flag == "--max-num-seqs":
        _add_share(
            effect,
            after.kv_cache_tokens,
            deployment.launch.max_num_seqs or _number(change.current),
            after_launch.max_num_seqs,
        )
    return effect


def predict_from_pool(change: ConfigChange, pool: MeasuredPool) -> PredictedEffect:
    """Changes that keep the pool's bytes, sized from the token count the server reported."""
    tokens_before = tokens_after = pool.kv_cache_tokens
    length_before = length_after = pool.max_model_len
    try:
        if change.flag == "--max-model-len":
            length_after = int(float(change.proposed))
        elif _resizable(change, pool):
            pool_after = kv_gib_at_share(pool.pool_gib, pool.device_gib, float(change.current), float(change.proposed))
            tokens_after = max(0, int(tokens_before * pool_after / pool.pool_gib))
        elif change.flag == "--kv-cache-dtype":
            after_bytes = 1.0 if change.proposed.startswith("fp8") else pool.kv_dtype_bytes
            tokens_after = int(tokens_before * pool.kv_dtype_bytes / after_bytes)
        elif change.flag == "--max-num-seqs":
            effect = PredictedEffect(
                text=f"KV tokens {tokens_before:,} unchanged (measured pool)",
                figures={"kv_cache_tokens_before": float(tokens_before), "kv_cache_tokens_after": float(tokens_after)},
            )
            _add_share(effect, tokens_after, pool.max_num_seqs or _number(change.current), int(float(change.proposed)))
            return effect
    except ValueError:
        return PredictedEffect(text=f"not predicted: {change.proposed!r} is not a value for {change.flag}")
    figures = {"kv_cache_tokens_before": float(tokens_before), "kv_cache_tokens_after": float(tokens_after)}
    parts = [f"KV tokens {tokens_before:,} → {tokens_after:,} (measured pool)"]
    if length_before and length_after:
        before, after = tokens_before / length_before, tokens_after / length_after
        figures.update(
            max_concurrency_before=round(before, 2),
            max_concurrency_after=round(after, 2),
            starts_before=float(tokens_before >= length_before),
            starts_after=float(tokens_after >= length_after),
        )
        parts.append(
            f"max concurrency {before:.2f}x at {length_before:,} tokens → {after:.2f}x at {length_after:,} tokens"
        )
    return PredictedEffect(text="; ".join(parts), figures=figures)


def _resizable(change: ConfigChange, pool: MeasuredPool) -> bool:
    """A utilisation change the measured pool can size: its GiB and the GPU's are known."""
    return change.flag == "--gpu-memory-utilization" and bool(pool.pool_gib and pool.device_gib)


def _add_share(effect: PredictedEffect, tokens: int, seqs_before: int | None, seqs_after: int | None) -> None:
    """What capping the batch buys: KV tokens each running request can hold without preemption."""
    if not seqs_after:
        return
    effect.figures["kv_tokens_per_running_request_after"] = round(tokens / seqs_after, 1)
    text = f"with at most {seqs_after} running, each can hold {tokens / seqs_after:,.0f} KV tokens"
    if seqs_before:
        effect.figures["kv_tokens_per_running_request_before"] = round(tokens / seqs_before, 1)
        text += f" (was {tokens / seqs_before:,.0f} at {seqs_before})"
    effect.text = f"{effect.text}; {text}"


def figures(deployment: Deployment, launch: LaunchConfig) -> KvFigures:
    """KV pool, tokens and concurrency for `launch`, calibrated to the measured pool if known."""
    baseline = estimate_memory(deployment.model, deployment.gpu, deployment.launch)
    breakdown = baseline if launch == deployment.launch else estimate_memory(deployment.model, deployment.gpu, launch)
    offset = 0.0
    if deployment.measured_kv_pool_gib is not None:
        offset = deployment.measured_kv_pool_gib - baseline.kv_pool_gib
    return _kv_figures(deployment.model, breakdown, breakdown.kv_pool_gib + offset)


def _kv_figures(model: ModelSpec, breakdown: MemoryBreakdown, pool_gib: float) -> KvFigures:
    block_bytes = breakdown.block_size * breakdown.kv_bytes_per_token
    num_blocks = max(0, int(pool_gib * GIB // block_bytes)) if block_bytes > 0 else 0
    per_request = blocks_per_request(
        model, breakdown.max_model_len, breakdown.block_size, breakdown.max_num_batched_tokens
    )
    fitting = _fitting_len(model, breakdown, num_blocks)
    return KvFigures(
        kv_pool_gib=round(pool_gib, 3),
        kv_cache_tokens=num_blocks * breakdown.block_size,
        max_concurrency=round(num_blocks / per_request, 2) if per_request else 0.0,
        max_model_len=breakdown.max_model_len,
        fits=num_blocks > 0 and per_request <= num_blocks,
        max_model_len_that_fits=fitting,
    )


def _fitting_len(model: ModelSpec, breakdown: MemoryBreakdown, num_blocks: int) -> int:
    """Largest max_model_len one request of which fits in `num_blocks` (vLLM's estimate)."""
    low, high = 0, max(model.max_position_embeddings, breakdown.max_model_len)
    while low < high:  # ≤ ~20 iterations
        mid = (low + high + 1) // 2
        if blocks_per_request(model, mid, breakdown.block_size, breakdown.max_num_batched_tokens) <= num_blocks:
            low = mid
        else:
            high = mid - 1
    return low


def _effect(before: KvFigures, after: KvFigures) -> PredictedEffect:
    parts = []
    if before.fits != after.fits:
        parts.append(
            "server starts" if after.fits else "server would NOT start (one max-length request no longer fits)"
        )
    elif not after.fits:
        parts.append(f"still does not start: longest request that fits is {after.max_model_len_that_fits:,} tokens")
    parts.append(f"KV cache {before.kv_pool_gib:.2f} → {after.kv_pool_gib:.2f} GiB")
    parts.append(f"KV tokens {before.kv_cache_tokens:,} → {after.kv_cache_tokens:,}")
    parts.append(
        f"max concurrency {before.max_concurrency:.2f}x at {before.max_model_len:,} tokens → "
        f"{after.max_concurrency:.2f}x at {after.max_model_len:,} tokens"
    )
    return PredictedEffect(
        text="; ".join(parts),
        figures={
            "kv_pool_gib_before": before.kv_pool_gib,
            "kv_pool_gib_after": after.kv_pool_gib,
            "kv_cache_tokens_before": float(before.kv_cache_tokens),
            "kv_cache_tokens_after": float(after.kv_cache_tokens),
            "max_concurrency_before": before.max_concurrency,
            "max_concurrency_after": after.max_concurrency,
            "max_model_len_before": float(before.max_model_len),
            "max_model_len_after": float(after.max_model_len),
            "starts_before": float(before.fits),
            "starts_after": float(after.fits),
        },
    )


def _number(text: str | None) -> int | None:
    try:
        return int(float(text)) if text else None
    except ValueError:
        return None


def _convert(text: str, kind: type) -> object:
    if kind is bool:
        return text.lower() in ("true", "1", "yes", "on")
    if kind is int:
        return int(float(text.replace(",", "")))
    if kind is float:
        return float(text)
    return text


def _modelled(version: str) -> bool:
    """Whether the memory model covers this vLLM version (else its newest rules apply)."""
    try:
        low, high = parse_bounds()
        return low <= parse_version(_major_minor(version)) <= high
    except (UserError, ValueError):
        return False


def _major_minor(version: str) -> str:
    parts = [part for part in version.lstrip("v").split(".") if part.isdigit()]
    return ".".join(parts[:2]) if len(parts) >= 2 else version
