"""vLLM's CPU backend: how it sizes its KV cache, replayed block for block (vLLM 0.32.0).

Why a module apart from memory.py: on a GPU vLLM *profiles* what is left for KV after
weights and activation; on its CPU backend the KV space is *given* — VLLM_CPU_KVCACHE_SPACE
(whole GiB) or `--kv-cache-memory-bytes` — and nothing is subtracted from it. What remains
is integer block arithmetic, which this module replays exactly, so that its figures are
the ones vLLM prints: `CPU KV cache size: N tokens, Maximum concurrency for M tokens per
request: X.XXx`, or its startup error with "the estimated maximum model length is L".

    kv_space        = VLLM_CPU_KVCACHE_SPACE × 2**30, else --kv-cache-memory-bytes
    bytes_per_block = block_size × KV bytes per token (all layers of the worker)
    num_blocks      = kv_space // bytes_per_block                 (num_gpu_blocks)
    per_request     = ceil(max_model_len / block_size)
    max_concurrency = num_blocks / per_request
    kv_tokens       = int(max_concurrency × max_model_len)
    usable          = kv_space − bytes_per_block                   (BlockPool's null block)
    starts iff usable > 0 and per_request × bytes_per_block ≤ usable
    estimated max model length = block_size × (usable // bytes_per_block), ≤ max_model_len

Every constant below names the vLLM 0.32.0 file it comes from (paths relative to the
`vllm` package). docs/advisor.md walks through the same steps.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from advisor.catalog import vllm_failures
from advisor.catalog.models import ModelSpec
from advisor.catalog.vllm_versions import parse_version
from advisor.collect.kv_space import CPU_KV_SPACE_ENV
from advisor.errors import UserError
from advisor.memory.budget import LaunchConfig, check_launch, kv_dtype_bytes, model_dtype_bytes
from advisor.memory.terms import GIB, kv_bytes_per_token_per_gpu, weights_gib_per_gpu
from rules.vllm_defaults import CPU_DEFAULT_BLOCK_SIZE

# The vLLM release whose source these rules were read from.
MODELLED_VLLM = "0.32.0"
# CPU_DEFAULT_BLOCK_SIZE (128, platforms/cpu.py) lives in rules/vllm_defaults.py with the other defaults.
# v1/core/kv_cache_utils.py, get_kv_cache_configs: before the fit check, "the null block
# BlockPool permanently holds back" is taken off the KV space (one block's bytes).
NULL_BLOCKS = 1
# platforms/cpu.py ("Legacy setting"): VLLM_CPU_KVCACHE_SPACE is read with int() and
# multiplied by GiB_bytes; it overwrites --kv-cache-memory-bytes when both are set.
CPU_KV_SPACE_UNIT_BYTES = GIB
# v1/core/kv_cache_utils.py, update_kv_cache_capacity (device name from _kv_cache_device_name).
CAPACITY_LOG = "CPU KV cache size: {tokens:,} tokens, Maximum concurrency for {length:,} tokens per request: {x:.2f}x"


class CpuKvSpace(BaseModel):
    """Where vLLM's CPU backend gets its KV bytes: the env var, the flag, or both (env wins)."""

    model_config = ConfigDict(frozen=True)

    cpu_kvcache_space_gib: int | None = Field(None, ge=0)
    kv_cache_memory_bytes: int | None = Field(None, ge=0)

    @property
    def bytes(self) -> int:
        """The bytes vLLM uses: the env var replaces the flag (platforms/cpu.py)."""
        if self.cpu_kvcache_space_gib is not None:
            return self.cpu_kvcache_space_gib * CPU_KV_SPACE_UNIT_BYTES
        if self.kv_cache_memory_bytes is None:
            raise UserError("--device cpu: give --cpu-kvcache-space-gib N or --kv-cache-memory-bytes N")
        return self.kv_cache_memory_bytes

    @property
    def source(self) -> str:
        """How the space is spelled on a `vllm serve` command line."""
        if self.cpu_kvcache_space_gib is not None:
            return f"{CPU_KV_SPACE_ENV}={self.cpu_kvcache_space_gib}"
        return f"--kv-cache-memory-bytes {self.kv_cache_memory_bytes}"

    def env(self) -> dict[str, str]:
        """The env assignments a command needs for this space (only the one vLLM reads)."""
        if self.cpu_kvcache_space_gib is None:
            return {}
        return {CPU_KV_SPACE_ENV: str(self.cpu_kvcache_space_gib)}


class CpuKvSizing(BaseModel):
    """What vLLM's CPU backend makes of one launch; byte and token counts are exact integers."""

    kv_space_bytes: int
    kv_space_source: str  # "VLLM_CPU_KVCACHE_SPACE=1" or "--kv-cache-memory-bytes N"
    kv_bytes_per_token: int
    block_size: int
    bytes_per_block: int
    num_blocks: int  # vLLM's num_gpu_blocks (cache_config_info), the null block included
    blocks_per_request: int
    max_model_len: int
    kv_cache_tokens: int  # as "CPU KV cache size: N tokens" and kv_cache_size_tokens
    max_concurrency: float  # unrounded, as kv_cache_max_concurrency (the log shows %.2f)
    log_line: str | None  # the capacity line vLLM logs; None when it fails before logging it
    fits: bool
    failure: str | None  # vLLM's exact startup error, or None
    estimated_max_model_len: int | None  # the figure in vLLM's error; None when it starts
    max_model_len_that_fits: int  # largest length ≤ the model's limit one request fits in
    weights_gib: float  # held beside the KV space, not in it
    vllm_version: str

    def memory_section(self) -> dict[str, float | int]:
        """advise's `memory` object: the KV space is the pool; nothing is subtracted from it."""
        space_gib = round(self.kv_space_bytes / GIB, 4)
        return {
            "total_gib": space_gib,
            "requested_gib": space_gib,
            "weights_gib": 0.0,
            "activation_gib": 0.0,
            "non_torch_gib": 0.0,
            "cudagraph_gib": 0.0,
            "kv_pool_gib": space_gib,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "kv_cache_tokens": self.kv_cache_tokens,
            "num_blocks": self.num_blocks,
            "max_concurrency": round(self.max_concurrency, 2),
        }


def size_cpu_kv(model: ModelSpec, config: LaunchConfig, space: CpuKvSpace) -> CpuKvSizing:
    """Replay get_kv_cache_configs and update_kv_cache_capacity for one CPU worker."""
    check_launch(model, config)
    check_cpu_model(model)
    version = parse_version(config.vllm_version)
    dtype_bytes = model_dtype_bytes(model, config.dtype)  # x86 CPUs list bfloat16 first, as CUDA does
    per_token = kv_bytes_per_token_per_gpu(
        model,
        kv_dtype_bytes(config.kv_cache_dtype, dtype_bytes),
        config.tensor_parallel_size,
        config.pipeline_parallel_size,
    )
    block_size = config.block_size or CPU_DEFAULT_BLOCK_SIZE
    max_model_len = config.max_model_len or model.max_position_embeddings
    page = block_size * per_token
    kv_bytes = space.bytes
    num_blocks = kv_bytes // page
    per_request = math.ceil(max_model_len / block_size)
    concurrency = num_blocks / per_request
    usable = kv_bytes - NULL_BLOCKS * page
    failure, estimate = _startup_failure(version, usable, page, per_request, max_model_len, block_size)
    tokens = int(concurrency * max_model_len)
    return CpuKvSizing(
        kv_space_bytes=kv_bytes,
        kv_space_source=space.source,
        kv_bytes_per_token=per_token,
        block_size=block_size,
        bytes_per_block=page,
        num_blocks=num_blocks,
        blocks_per_request=per_request,
        max_model_len=max_model_len,
        kv_cache_tokens=tokens,
        max_concurrency=concurrency,
        log_line=None if failure else CAPACITY_LOG.format(tokens=tokens, length=max_model_len, x=concurrency),
        fits=failure is None,
        failure=failure,
        estimated_max_model_len=estimate,
        max_model_len_that_fits=fitting_len(usable, page, block_size, model.max_position_embeddings),
        weights_gib=round(
            weights_gib_per_gpu(
                model,
                dtype_bytes,
                config.quantization or model.native_quantization,
                config.tensor_parallel_size,
                config.pipeline_parallel_size,
            ),
            4,
        ),
        vllm_version=".".join(str(p) for p in version),
    )


def _startup_failure(
    version: tuple[int, int, int], usable: int, page: int, per_request: int, max_model_len: int, block_size: int
) -> tuple[str | None, int | None]:
    """_check_enough_kv_cache_memory: no usable bytes, or one max-length request does not fit."""
    if usable <= 0:
        return vllm_failures.no_cache_blocks(version), None
    needed = per_request * page
    if needed <= usable:
        return None, None
    estimate = fitting_len(usable, page, block_size, max_model_len)
    return vllm_failures.max_seq_len_does_not_fit(
        version, max_model_len, needed / GIB, usable / GIB, estimate
    ), estimate


def fitting_len(usable_bytes: int, bytes_per_block: int, block_size: int, bound: int) -> int:
    """estimate_max_model_len's answer in closed form: its binary search over 1..bound keeps
    the largest L with ceil(L / block) × bytes_per_block ≤ usable, i.e. whole blocks only —
    which is why 50,000,000 bytes give 1920 (15 × 128) and not the 2,048 of 16 blocks: the
    16th block's bytes are the null block's."""
    if usable_bytes <= 0:
        return 0
    return min(bound, block_size * (usable_bytes // bytes_per_block))


def check_cpu_model(model: ModelSpec) -> None:
    """Refuse what this replay does not cover rather than print a wrong number."""
    if model.attention == "mla":
        raise UserError(
            f"--model {model.name!r}: MLA on vLLM's CPU backend (block size 16, or 128 with AMX) "
            "is not modelled; size it with --gpu instead"
        )
    if model.sliding_window is not None:
        raise UserError(
            f"--model {model.name!r}: sliding-window attention on vLLM's CPU backend is not "
            "modelled (its admission depends on in-flight batches); size it with --gpu instead"
        )
