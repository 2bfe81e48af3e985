"""Memory math: what a vLLM launch does with one GPU's memory, and whether it starts.

`estimate_memory(model, gpu, config)` replays vLLM V1's KV budget (docs/reference.md §4.1)
for one GPU of the deployment: requested = total × util; available KV = requested −
weights − peak activation − non-torch [− CUDA graphs from 0.20]; blocks, KV tokens and
max concurrency at max_model_len; and either "fits" or the exact error vLLM would raise.
It is pure and cheap (no I/O, microseconds), so triage can call it per ConfigChange.

Not predictable from a launch config alone: the "Free memory on device … is less than
desired GPU memory utilization" failure depends on what *other* processes hold. Pass
`free_memory_gib` when known (from a log or nvidia-smi); otherwise that check is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from advisor.catalog import vllm_failures
from advisor.catalog.gpus import GpuSpec
from advisor.catalog.models import ModelSpec
from advisor.catalog.vllm_versions import (
    NEWEST_VLLM,
    TOKENS_AS_CONCURRENCY_FROM,
    default_block_size,
    default_gpu_memory_utilization,
    default_max_num_batched_tokens,
    default_max_num_seqs,
    parse_version,
)
from advisor.collect.cpu_features import has_bf16_arithmetic
from advisor.errors import UserError
from advisor.memory.terms import (
    DTYPE_BYTES,
    GIB,
    activation_gib,
    blocks_per_request,
    cudagraph_gib,
    engine_cpu_activation_gib,
    kv_bytes_per_token_per_gpu,
    non_torch_gib,
    weights_gib_per_gpu,
)
from rules.vllm_defaults import FREE_MEMORY_CHECK_FROM

KV_DTYPES = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16", "float16")
DTYPES = ("auto", "bfloat16", "float16", "half", "float32", "float")


class LaunchConfig(BaseModel):
    """A `vllm serve` launch, fields named as vLLM's flags. None = vLLM's default for the version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tensor_parallel_size: int = Field(1, ge=1)
    pipeline_parallel_size: int = Field(1, ge=1)
    dtype: str = "auto"
    quantization: str | None = None
    kv_cache_dtype: str = "auto"
    gpu_memory_utilization: float | None = Field(None, gt=0, le=1)
    max_model_len: int | None = Field(None, ge=1)
    max_num_seqs: int | None = Field(None, ge=1)
    max_num_batched_tokens: int | None = Field(None, ge=1)
    block_size: int | None = Field(None, ge=1)
    enforce_eager: bool = False
    enable_prefix_caching: bool | None = None
    vllm_version: str = NEWEST_VLLM  # not a flag: which vLLM's rules and texts to apply


class MemoryBreakdown(BaseModel):
    """Per-GPU budget of one launch; GiB unless the name says otherwise."""

    total_gib: float
    requested_gib: float
    weights_gib: float
    activation_gib: float
    non_torch_gib: float
    cudagraph_gib: float
    kv_pool_gib: float  # vLLM's "Available KV cache memory"; negative = does not start
    kv_bytes_per_token: int  # per GPU: this rank's layers and KV heads
    kv_cache_tokens: int  # as vLLM logs "GPU KV cache size: N tokens" for this version
    num_blocks: int
    max_concurrency: float  # requests of max_model_len tokens that fit at once
    fits: bool
    failure: str | None  # vLLM's exact error text, or None
    max_model_len_that_fits: int  # largest max_model_len this KV pool can serve (0 = none)
    # the resolved launch (defaults filled in for the version)
    max_model_len: int
    block_size: int
    gpu_memory_utilization: float
    max_num_seqs: int
    max_num_batched_tokens: int
    vllm_version: str

    MEMORY_KEYS: ClassVar[tuple[str, ...]] = (
        "total_gib",
        "requested_gib",
        "weights_gib",
        "activation_gib",
        "non_torch_gib",
        "cudagraph_gib",
        "kv_pool_gib",
        "kv_bytes_per_token",
        "kv_cache_tokens",
        "num_blocks",
        "max_concurrency",
    )

    def memory_section(self) -> dict[str, float | int]:
        """The `memory` object of the advise JSON (stable keys, issue #2)."""
        return {key: getattr(self, key) for key in self.MEMORY_KEYS}


@dataclass(frozen=True)
class _Resolved:
    """A launch with vLLM's defaults for its version and device filled in: what the budget is computed from."""

    version: tuple[int, ...]
    util: float
    max_num_seqs: int
    batched_tokens: int
    block_size: int
    max_model_len: int
    cpu: bool  # the bundled engine's CPU device budget: no CUDA context, NCCL or graphs
    dtype_bytes: int
    quantization: str | None


@dataclass(frozen=True)
class _Overheads:
    """What a GPU holds besides the KV pool (GiB): weights, the profiled activation peak, memory torch does not
    see (CUDA context, NCCL; others' memory before vLLM's free-memory check), and the CUDA graphs."""

    weights: float
    activation: float
    non_torch: float
    cudagraph: float


@dataclass(frozen=True)
class _KvPool:
    """The KV pool of one GPU: bytes a token costs on this rank, whole blocks, concurrency at max_model_len, tokens
    as vLLM logs them, the longest max_model_len it serves, and the bytes one max_model_len request needs."""

    kv_per_token: int
    num_blocks: int
    concurrency: float
    kv_tokens: int
    fitting_len: int
    request_bytes: int


def estimate_memory(
    model: ModelSpec, gpu: GpuSpec, config: LaunchConfig, free_memory_gib: float | None = None
) -> MemoryBreakdown:
    """Replay vLLM's KV sizing for the worst GPU of the launch. Raises UserError for launches
    vLLM rejects at argument parsing (TP not dividing heads, PP > layers, unknown dtypes)."""
    check_launch(model, config)
    launch = _resolve(model, gpu, config)
    total = gpu.usable_gib
    requested = total * launch.util
    held = _overheads(model, config, launch, total, free_memory_gib)
    available = requested - held.weights - held.activation - held.non_torch - held.cudagraph

    pool = _kv_pool(model, config, launch, available)
    failure = _failure(launch, total, requested, held.weights, free_memory_gib)
    if failure is None and pool.num_blocks == 0:
        failure = vllm_failures.no_cache_blocks(launch.version)
    if failure is None and pool.request_bytes > available * GIB:
        failure = vllm_failures.max_seq_len_does_not_fit(
            launch.version, launch.max_model_len, pool.request_bytes / GIB, available, pool.fitting_len
        )

    return MemoryBreakdown(
        total_gib=round(total, 4),
        requested_gib=round(requested, 4),
        weights_gib=round(held.weights, 4),
        activation_gib=round(held.activation, 4),
        non_torch_gib=round(held.non_torch, 4),
        cudagraph_gib=round(held.cudagraph, 4),
        kv_pool_gib=round(available, 4),
        kv_bytes_per_token=pool.kv_per_token,
        kv_cache_tokens=pool.kv_tokens,
        num_blocks=pool.num_blocks,
        max_concurrency=round(pool.concurrency, 2),
        fits=failure is None,
        failure=failure,
        max_model_len_that_fits=pool.fitting_len,
        max_model_len=launch.max_model_len,
        block_size=launch.block_size,
        gpu_memory_utilization=launch.util,
        max_num_seqs=launch.max_num_seqs,
        max_num_batched_tokens=launch.batched_tokens,
        vllm_version=".".join(str(p) for p in launch.version),
    )


def _resolve(model: ModelSpec, gpu: GpuSpec, config: LaunchConfig) -> _Resolved:
    """The launch's values where it sets them, vLLM's defaults for the version and device where it does not."""
    version = parse_version(config.vllm_version)
    cpu = gpu.arch == "cpu"
    return _Resolved(
        version=version,
        util=config.gpu_memory_utilization or default_gpu_memory_utilization(version),
        max_num_seqs=config.max_num_seqs or default_max_num_seqs(version, gpu),
        batched_tokens=config.max_num_batched_tokens or default_max_num_batched_tokens(version, gpu),
        block_size=config.block_size or default_block_size(model.attention == "mla", gpu),
        max_model_len=config.max_model_len or model.max_position_embeddings,
        cpu=cpu,
        dtype_bytes=model_dtype_bytes(model, config.dtype, cpu),
        quantization=config.quantization or model.native_quantization,
    )


def _overheads(
    model: ModelSpec, config: LaunchConfig, launch: _Resolved, total: float, free_memory_gib: float | None
) -> _Overheads:
    """One GPU's memory outside the KV pool, as vLLM's profile run measures it for the version."""
    tp, pp, version = config.tensor_parallel_size, config.pipeline_parallel_size, launch.version
    weights = weights_gib_per_gpu(model, launch.dtype_bytes, launch.quantization, tp, pp, rope_cache=not launch.cpu)
    if launch.cpu:  # no CUDA context, NCCL or graphs; the engine's own activation estimate
        activation = engine_cpu_activation_gib(
            model, launch.dtype_bytes, launch.batched_tokens, launch.max_num_seqs, launch.max_model_len
        )
        non_torch = cudagraph = 0.0
    else:
        activation = activation_gib(model, launch.batched_tokens, launch.max_num_seqs, pp, version)
        non_torch = non_torch_gib(tp, pp, version)
        cudagraph = cudagraph_gib(model, launch.max_num_seqs, pp, config.enforce_eager, version)
    if free_memory_gib is not None and version < FREE_MEMORY_CHECK_FROM:
        non_torch += max(0.0, total - free_memory_gib)  # 0.8–0.9.0 charged others' memory here
    return _Overheads(weights, activation, non_torch, cudagraph)


def _kv_pool(model: ModelSpec, config: LaunchConfig, launch: _Resolved, available_gib: float) -> _KvPool:
    """The KV pool vLLM carves from `available_gib`: whole blocks of this rank's layers and heads, and what they
    hold in requests of max_model_len tokens and in tokens (counted as the version logs them)."""
    dtype_bytes = kv_dtype_bytes(config.kv_cache_dtype, launch.dtype_bytes)
    kv_per_token = kv_bytes_per_token_per_gpu(
        model, dtype_bytes, config.tensor_parallel_size, config.pipeline_parallel_size
    )
    page_bytes = launch.block_size * kv_per_token
    num_blocks = max(0, int(available_gib * GIB // page_bytes))
    per_request = blocks_per_request(model, launch.max_model_len, launch.block_size, launch.batched_tokens)
    concurrency = num_blocks / per_request
    if launch.version >= TOKENS_AS_CONCURRENCY_FROM:
        kv_tokens = int(concurrency * launch.max_model_len)
    else:
        kv_tokens = num_blocks * launch.block_size
    fitting_len = max_len_for_kv_bytes(
        model, available_gib * GIB, kv_per_token, launch.block_size, launch.batched_tokens
    )
    return _KvPool(kv_per_token, num_blocks, concurrency, kv_tokens, fitting_len, per_request * page_bytes)


def _failure(
    launch: _Resolved, total: float, requested: float, weights: float, free_memory_gib: float | None
) -> str | None:
    """vLLM's own error for a GPU that cannot give what the launch asks before the KV pool is sized, or None (a
    version without a check has no error for it, and the next check is tried)."""
    version, util = launch.version, launch.util
    failure: str | None = None
    if free_memory_gib is not None and free_memory_gib < requested:
        failure = vllm_failures.free_memory_below_requested(version, free_memory_gib, total, util, requested)
    elif free_memory_gib is None and util >= 1.0 and not launch.cpu:
        # The whole GPU asked for: vLLM's own CUDA context is allocated before its free-memory check, so the
        # free memory it finds is always below the total (vllm/v1/worker/utils.py request_memory, 0.32).
        own = non_torch_gib(1, 1, version)
        failure = vllm_failures.free_memory_below_requested(version, total - own, total, util, requested)
    if failure is None and weights > (free_memory_gib if free_memory_gib is not None else total):
        failure = vllm_failures.weights_do_not_fit(version, weights, total)
    return failure


def max_len_for_kv_bytes(
    model: ModelSpec,
    available_bytes: float,
    kv_bytes_per_token: int,
    block_size: int,
    max_num_batched_tokens: int,
) -> int:
    """Largest max_model_len (≤ the model's limit) whose one request fits in `available_bytes`.

    The same binary search vLLM runs for "the estimated maximum model length is M".
    """
    page_bytes = block_size * kv_bytes_per_token

    def fits(length: int) -> bool:
        return blocks_per_request(model, length, block_size, max_num_batched_tokens) * page_bytes <= available_bytes

    low, high = 0, model.max_position_embeddings
    if high < 1 or not fits(1):
        return 0
    while low < high:  # invariant: fits(low) or low == 0; at most ~18 iterations
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def model_dtype_bytes(model: ModelSpec, dtype: str, cpu: bool = False) -> float:
    """`--dtype auto`: on GPUs the checkpoint's dtype, a float32 checkpoint cast to bfloat16 (vLLM);
    on the bundled engine's CPU device what this CPU computes fastest: bfloat16 with AVX512-BF16 or
    AMX, and without them for a half-precision checkpoint (the engine's native kernels take bf16
    there), float32 otherwise (engine/core/config.py `torch_dtype`)."""
    if dtype not in DTYPES:
        raise UserError(f"--dtype {dtype!r}: unknown; choose one of {', '.join(DTYPES)}")
    if dtype == "auto":
        if cpu:
            half_checkpoint = DTYPE_BYTES.get(model.torch_dtype, 4.0) <= 2.0
            return 2.0 if has_bf16_arithmetic() or half_checkpoint else 4.0
        return min(DTYPE_BYTES.get(model.torch_dtype, 2.0), 2.0)
    return DTYPE_BYTES[dtype]


def kv_dtype_bytes(kv_cache_dtype: str, dtype_bytes: float) -> float:
    """Bytes per KV element: `auto` stores the model dtype, 16-bit names 2, every fp8 variant 1."""
    return {"auto": dtype_bytes, "bfloat16": 2.0, "float16": 2.0}.get(kv_cache_dtype, 1.0)


def check_launch(model: ModelSpec, config: LaunchConfig) -> None:
    """The argument checks vLLM makes before touching memory, as one-line UserErrors."""
    tp, pp = config.tensor_parallel_size, config.pipeline_parallel_size
    if model.num_attention_heads % tp:
        raise UserError(
            f"--tensor-parallel-size {tp}: {model.name} has {model.num_attention_heads} attention "
            "heads, which must divide evenly; pick a divisor of the head count"
        )
    kv_heads = model.num_key_value_heads
    if model.attention == "gqa" and (kv_heads % tp if kv_heads >= tp else tp % kv_heads):
        raise UserError(
            f"--tensor-parallel-size {tp}: {model.name} has {kv_heads} KV heads; TP must divide "
            "them or be a multiple of them"
        )
    if pp > model.num_hidden_layers:
        raise UserError(
            f"--pipeline-parallel-size {pp}: {model.name} has only {model.num_hidden_layers} layers; "
            "use at most that many stages"
        )
    if config.kv_cache_dtype not in KV_DTYPES:
        raise UserError(f"--kv-cache-dtype {config.kv_cache_dtype!r}: unknown; choose one of {', '.join(KV_DTYPES)}")
