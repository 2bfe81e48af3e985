"""vLLM versions and the version-dependent defaults the memory math needs.

Why its own module: the KV budget, the defaults and the exact failure texts all changed
between vLLM 0.8 and 0.33 (docs/reference.md §4, §2.6), and triage reads servers of any of
those versions. Every branch below names the version range it comes from.
"""

from __future__ import annotations

import re

from advisor.errors import UserError
from advisor.hardware import GpuSpec, is_a100

Version = tuple[int, int, int]

NEWEST_VLLM = "0.33"
OLDEST_VLLM = "0.8"

# The first version whose behaviour each branch follows (docs/reference.md §4, §2.6).
CUDAGRAPH_PROFILED_FROM: Version = (0, 20, 0)  # graphs estimated and subtracted; util 0.92
LOW_ACTIVATION_FROM: Version = (0, 19, 0)  # first version with the lower measured peaks
FREE_MEMORY_CHECK_FROM: Version = (0, 9, 1)  # "Free memory on device ..." startup check
TOKENS_AS_CONCURRENCY_FROM: Version = (0, 21, 0)  # logged tokens = concurrency x max_model_len
LARGE_GPU_TIER_FROM: Version = (0, 28, 0)  # >=160 GiB tier for batch defaults
CPU_DEFAULTS_FROM: Version = (0, 32, 0)  # the CPU backend's own defaults below, as read in vLLM 0.32.0

# vLLM's CPU backend (device_config=cpu), read from vLLM 0.32.0. engine/arg_utils.py,
# EngineArgs.get_batch_defaults, "cpu specific default values": the OpenAI server's defaults
# are these, times world_size (TP x PP). They never appear in the log's `non-default args`, so
# triage must know them to read back what a CPU server really runs with.
CPU_API_SERVER_MAX_NUM_SEQS = 128
CPU_API_SERVER_MAX_NUM_BATCHED_TOKENS = 2048
# platforms/cpu.py, CpuPlatform.check_and_update_config: a block size the user did not set
# becomes 128 on the CPU backend (MLA gets 16 or, with AMX, keeps 128; DeepSeek-V4 256).
CPU_DEFAULT_BLOCK_SIZE = 128

_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[.\w+-]*)")


def parse_version(text: str) -> Version:
    """'0.33', '0.8.5', 'v0.10.1.1', '0.15.2rc1' → (major, minor, patch); UserError otherwise."""
    version = version_of(text)
    if version is None:
        raise UserError(f"--vllm-version {text!r}: not a version; write it like 0.33 or 0.10.1")
    if not parse_bounds()[0] <= version[:2] + (0,) <= parse_bounds()[1]:
        raise UserError(
            f"--vllm-version {text!r}: outside the V1 range this advisor models "
            f"({OLDEST_VLLM}–{NEWEST_VLLM}); pick a version in that range"
        )
    return version


def version_of(text: str | None) -> Version | None:
    """Like parse_version, without the range check: for versions read from a server's own log
    or /version (the bundled engine reports servops' version), None when it is not one."""
    match = _VERSION.fullmatch((text or "").strip())
    return (int(match[1]), int(match[2]), int(match[3] or 0)) if match else None


def parse_bounds() -> tuple[Version, Version]:
    oldest = tuple(int(p) for p in OLDEST_VLLM.split(".")) + (0,)
    newest = tuple(int(p) for p in NEWEST_VLLM.split(".")) + (0,)
    return oldest, newest  # type: ignore[return-value]


def default_gpu_memory_utilization(version: Version) -> float:
    """0.9 up to 0.19, 0.92 from 0.20 (which started counting CUDA-graph memory)."""
    return 0.92 if version >= CUDAGRAPH_PROFILED_FROM else 0.9


def default_max_num_seqs(version: Version, gpu: GpuSpec) -> int:
    """API-server default by device memory (docs/reference.md §4.3, `arg_utils.py`)."""
    memory_gib = gpu.usable_gib
    if gpu.arch == "cpu":
        return 256  # the bundled engine's default (engine/core/config.py), whatever its budget
    if version < (0, 8, 5):
        return 1024
    if version < (0, 9, 0):
        return 1024 if memory_gib >= 70 else 256
    if version >= LARGE_GPU_TIER_FROM and memory_gib >= 160:
        return 1024
    return 1024 if memory_gib >= 70 and not is_a100(gpu) else 256


def default_max_num_batched_tokens(version: Version, gpu: GpuSpec) -> int:
    """API-server default: 2048; 8192 on ≥70 GiB (non-A100 from 0.9); 16384 on ≥160 GiB (0.28+)."""
    memory_gib = gpu.usable_gib
    if gpu.arch == "cpu":
        return 2048  # the bundled engine's default with chunked prefill
    if version >= LARGE_GPU_TIER_FROM and memory_gib >= 160:
        return 16384
    if memory_gib >= 70 and (version < (0, 9, 0) or not is_a100(gpu)):
        return 8192
    return 2048


def vllm_cpu_defaults(version: Version, world_size: int = 1) -> dict[str, int] | None:
    """What vLLM's API server runs with on its CPU backend when the flags are left out:
    {max_num_seqs, max_num_batched_tokens, block_size}. None before CPU_DEFAULTS_FROM: older
    releases were not read, so nothing is assumed for them."""
    if version < CPU_DEFAULTS_FROM:
        return None
    return cpu_batch_defaults(world_size)


def cpu_batch_defaults(world_size: int = 1) -> dict[str, int]:
    """vLLM's CPU API-server defaults for one engine of `world_size` ranks (TP x PP): the batch caps scale
    with the ranks (vllm/engine/arg_utils.py get_batch_defaults), the block size does not. The one table
    behind both the collector's view of a server (vllm_cpu_defaults) and the model's (perf.limits_for)."""
    size = max(1, world_size)
    return {
        "max_num_seqs": CPU_API_SERVER_MAX_NUM_SEQS * size,
        "max_num_batched_tokens": CPU_API_SERVER_MAX_NUM_BATCHED_TOKENS * size,
        "block_size": CPU_DEFAULT_BLOCK_SIZE,
    }


def default_block_size(is_mla: bool, gpu: GpuSpec) -> int:
    """16 on CUDA; MLA on Hopper/Blackwell gets FlashMLA's 64 (docs/reference.md §4.3)."""
    return 64 if is_mla and gpu.arch in {"hopper", "blackwell"} else 16


def format_gib(value: float, version: Version) -> str:
    """GiB as vLLM prints it: '%.2f' up to 0.13, `round(x, 2)` from 0.14 ('24.0')."""
    return f"{value:.2f}" if version < (0, 14, 0) else str(round(value, 2))
